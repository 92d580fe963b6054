"""Code generation shared by the executors that compile fused groups: the C
expression table (cstyle.py) and the C++ functions it calls (ops.h). The CUDA
renderer (arrayx/_gpu/codegen.py) and the CPU's native renderer
(arrayx/_cpu/native/codegen.py) render every instruction through it."""
