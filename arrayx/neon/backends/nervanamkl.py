"""neon's MKL backend name over arrayx. arrayx's CPU executor is the same for
'cpu' and 'mkl' (NumPy uses whatever BLAS it was built with), so
`NervanaMKL` is the CPU backend under the name neon scripts ask for."""

from .backend import Backend
from .nervanacpu import CPUTensor, NervanaCPU


class MKLTensor(CPUTensor):
    """A Tensor of the MKL backend (the CPU tensor; there is no MKL layout to convert)."""


class NervanaMKL(NervanaCPU):
    """gen_backend('mkl'): the CPU backend, on arrayx's CPU executor."""

    backend_name = "mkl"
    tensor_cls = MKLTensor


Backend.backends["mkl"] = NervanaMKL
