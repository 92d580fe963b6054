"""The array API standard's FFT extension (`xp.fft`)."""

__all__ = []
