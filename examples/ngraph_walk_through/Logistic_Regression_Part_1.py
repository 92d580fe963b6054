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
# From ngraph-python examples/walk_through/Logistic_Regression_Part_1.ipynb, Apache-2.0
# (https://github.com/NervanaSystems/ngraph-python at commit ac032c8; the
# copyright notice is the one ngraph-python's source files carry, the license
# text is in LICENSE beside this file).
# What changed: the notebook's code cells are concatenated in order, two blank
# lines apart, under this header; its markdown cells are left out. The code
# is unchanged.
#
# Run: python -m arrayx.ngraph Logistic_Regression_Part_1.py
# It imports `gendata`: gendata.py beside this file draws the mixture
# ngraph-python's examples/walk_through/gendata.py draws.

import ngraph as ng
import ngraph.transformers as ngt
    
N = ng.make_axis(length=128, name='N')
C = ng.make_axis(length=4)


alpha = ng.placeholder(axes=())


X = ng.placeholder(axes=[C, N])
Y = ng.placeholder(axes=[N])


W = ng.variable(axes=[C], initial_value=0)


Y_hat = ng.sigmoid(ng.dot(W, X))
L = ng.cross_entropy_binary(Y_hat, Y, out_axes=()) / ng.batch_size(Y_hat)


grad = ng.deriv(L, W)


update = ng.assign(W, W - alpha * grad / ng.tensor_size(Y_hat))


import gendata

g = gendata.MixtureGenerator([.5, .5], (C.length,))
XS, YS = g.gen_data(N.length, 10)


from contextlib import closing

with closing(ngt.make_transformer()) as transformer:
    update_fun = transformer.computation([L, W, update], alpha, X, Y)
    
    for i in range(10):
        for xs, ys in zip(XS, YS):
            loss_val, w_val, _ = update_fun(5.0 / (1 + i), xs, ys)
            print("W: %s, loss %s" % (w_val, loss_val))
