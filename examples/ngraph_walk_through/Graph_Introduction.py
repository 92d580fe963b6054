# ******************************************************************************
# Copyright 2017-2018 Intel Corporation
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ******************************************************************************
# From ngraph-python examples/walk_through/Graph_Introduction.ipynb, Apache-2.0
# (https://github.com/NervanaSystems/ngraph-python at commit ac032c8; the
# copyright notice is the one ngraph-python's source files carry, the license
# text is in LICENSE beside this file).
# What changed: the notebook's code cells are concatenated in order, two blank
# lines apart, under this header; its markdown cells are left out. The code
# is unchanged.
#
# Run: python -m arrayx.ngraph Graph_Introduction.py

from __future__ import print_function
from contextlib import closing
import ngraph as ng
import ngraph.transformers as ngt

# Build the graph
x = ng.placeholder(axes=())
x_plus_one = x + 1

# Select a transformer
with closing(ngt.make_transformer()) as transformer:

    # Define a computation
    plus_one = transformer.computation(x_plus_one, x)

    # Run the computation
    for i in range(5):
        print(plus_one(i)) 


import ngraph as ng
import ngraph.transformers as ngt


x = ng.placeholder(axes=())


x_plus_one = x + 1


x_plus_one = ng.add(x, ng.constant(1))


# Select a transformer
with closing(ngt.make_transformer()) as transformer:

    # Define a computation
    plus_one = transformer.computation(x_plus_one, x)
    
    # Run the computation
    for i in range(5):
        print(plus_one(i))


class Model(object):
    def __init__(self):
        self.a_AssignableTensorOp_0_0 = None
        self.a_AssignableTensorOp_0_0_v_AssignableTensorOp_0_0_ = None
        self.a_AssignableTensorOp_1_0 = None
        self.a_AssignableTensorOp_1_0_v_AssignableTensorOp_1_0_ = None
        self.a_AddZeroDim_0_0 = None
        self.a_AddZeroDim_0_0_v_AddZeroDim_0_0_ = None
        self.be = NervanaObject.be

    def alloc_a_AssignableTensorOp_0_0(self):
        self.update_a_AssignableTensorOp_0_0(np.empty(1, dtype=np.dtype('float32')))

    def update_a_AssignableTensorOp_0_0(self, buffer):
        self.a_AssignableTensorOp_0_0 = buffer
        self.a_AssignableTensorOp_0_0_v_AssignableTensorOp_0_0_ = np.ndarray(shape=(), dtype=np.float32,
            buffer=buffer, offset=0, strides=())

    def alloc_a_AssignableTensorOp_1_0(self):
        self.update_a_AssignableTensorOp_1_0(np.empty(1, dtype=np.dtype('float32')))

    def update_a_AssignableTensorOp_1_0(self, buffer):
        self.a_AssignableTensorOp_1_0 = buffer
        self.a_AssignableTensorOp_1_0_v_AssignableTensorOp_1_0_ = np.ndarray(shape=(), dtype=np.float32,
            buffer=buffer, offset=0, strides=())

    def alloc_a_AddZeroDim_0_0(self):
        self.update_a_AddZeroDim_0_0(np.empty(1, dtype=np.dtype('float32')))

    def update_a_AddZeroDim_0_0(self, buffer):
        self.a_AddZeroDim_0_0 = buffer
        self.a_AddZeroDim_0_0_v_AddZeroDim_0_0_ = np.ndarray(shape=(), dtype=np.float32,
            buffer=buffer, offset=0, strides=())

    def allocate(self):
        self.alloc_a_AssignableTensorOp_0_0()
        self.alloc_a_AssignableTensorOp_1_0()
        self.alloc_a_AddZeroDim_0_0()

    def Computation_0(self):
        np.add(self.a_AssignableTensorOp_0_0_v_AssignableTensorOp_0_0_, 
               self.a_AssignableTensorOp_1_0_v_AssignableTensorOp_1_0_, 
               out=self.a_AddZeroDim_0_0_v_AddZeroDim_0_0_)

    def init(self):
        pass
