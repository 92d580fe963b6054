"""An emulated CUDA device for running the GPU executor without a GPU.

`ARRAYX_GPU_EMULATION=1` registers `cuda:0` on it where no real CUDA device
is present. runtime.py is the device (memory, copies, launches, GEMM);
host_kernels.py compiles the generated CUDA for the host with host.h (CUDA's
execution model) and launch.cpp (the grid walk).
"""

from .runtime import EmulatedRuntime  # noqa: F401
