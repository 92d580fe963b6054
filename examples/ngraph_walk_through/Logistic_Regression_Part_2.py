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
# From ngraph-python examples/walk_through/Logistic_Regression_Part_2.ipynb, Apache-2.0
# (https://github.com/NervanaSystems/ngraph-python at commit ac032c8; the
# copyright notice is the one ngraph-python's source files carry, the license
# text is in LICENSE beside this file).
# What changed: the notebook's code cells are concatenated in order, two blank
# lines apart, under this header; its markdown cells are left out. The code
# is unchanged.
#
# Run: python -m arrayx.ngraph Logistic_Regression_Part_2.py
# It imports `gendata`: gendata.py beside this file draws the mixture
# ngraph-python's examples/walk_through/gendata.py draws.

import ngraph as ng
import ngraph.transformers as ngt
import gendata


ax_W = ng.make_axis(length=2)
ax_H = ng.make_axis(length=2)  # new axis added.
ax_N = ng.make_axis(length=128, name='N')


alpha = ng.placeholder(())
X = ng.placeholder([ax_W, ax_H, ax_N])  # now X has shape (W, H, N)
Y = ng.placeholder([ax_N])


W = ng.variable([ax_W, ax_H], initial_value=0).named('W')  # now the Weight Matrix W has shape (W, H)
b = ng.variable((), initial_value=0).named('b')


Y_hat = ng.sigmoid(ng.dot(W, X) + b)
L = ng.cross_entropy_binary(Y_hat, Y, out_axes=())


print([var.name for var in L.variables()])


updates = [ng.assign(v, v - alpha * ng.deriv(L, v) / ng.batch_size(Y_hat))
           for v in L.variables()]


all_updates = ng.doall(updates)


def avg_loss(xs, ys):
    total_loss = 0
    for x, y in zip(xs, ys):
        loss_val = eval_fun(x, y)
        total_loss += loss_val
    return total_loss / x.shape[-1]


from contextlib import closing

with closing(ngt.make_transformer()) as transformer:

    update_fun = transformer.computation([L, W, b, all_updates], alpha, X, Y)
    eval_fun = transformer.computation(L, X, Y)
    
    g = gendata.MixtureGenerator([.5, .5], (ax_W.length, ax_H.length))
    XS, YS = g.gen_data(ax_N.length, 10)
    EVAL_XS, EVAL_YS = g.gen_data(ax_N.length, 4)

    print("Starting avg loss: {}".format(avg_loss(EVAL_XS, EVAL_YS)))
    for i in range(10):
        for xs, ys in zip(XS, YS):
            loss_val, w_val, b_val, _ = update_fun(5.0 / (1 + i), xs, ys)
        print("After epoch %d: W: %s, b: %s, avg loss %s" % (i, w_val.T, b_val, avg_loss(EVAL_XS, EVAL_YS)))
    
