"""The examples of seed 001 (neon's backend guide), run on arrayx.neon with
Python 3's print, checked against what the seed shows and against NumPy.

The seed's Autodiff examples are in test_neon_autodiff.py."""

import numpy as np

from arrayx.neon import NervanaObject
from arrayx.neon.backends import gen_backend
from arrayx.neon.backends.backend import OpTreeNode, Tensor


def test_minimal_example_prints_what_the_seed_shows(capsys):
    be = gen_backend('cpu')
    x0 = be.ones((2, 2), name='x0')
    x1 = be.ones((2, 2), name='x1')
    f = x0 + x1               # op-tree creation
    f_val = be.empty((2, 2))  # output buffer allocation
    f_val[:] = f              # execution

    with np.printoptions(legacy='1.13'):  # the NumPy of the seed's day
        print(f)                  # print the op-tree tuple
        print(f_val.get())        # get the device tensor
    out = capsys.readouterr().out
    # The seed shows the output on one line: "({...}, x0, x1) [[ 2.  2.]  [ 2.  2.]]"
    assert " ".join(out.splitlines()) == "({'shape': (2, 2), 'op': 'add'}, x0, x1) [[ 2.  2.]  [ 2.  2.]]"
    assert isinstance(f, OpTreeNode) and isinstance(f, tuple) and len(f) == 3
    assert f[0] == {'shape': (2, 2), 'op': 'add'} and f[1] is x0 and f[2] is x1
    NervanaObject.be = None


def test_directly_calling_the_backend():
    be = gen_backend(backend='mkl')
    assert type(be).__name__ == 'NervanaMKL'

    myTensor = be.zeros((100, 100))
    assert isinstance(myTensor, Tensor) and myTensor.shape == (100, 100)

    array_of_zeros = np.zeros((100, 100))
    myTensor = be.zeros_like(array_of_zeros)            # 1.
    assert myTensor.shape == (100, 100) and myTensor.dtype == np.float32
    myTensor = be.array(array_of_zeros)                 # 2.
    np.testing.assert_array_equal(myTensor.get(), array_of_zeros)
    myTensor = be.empty((100, 100))                     # 3.
    myTensor[:] = 0
    np.testing.assert_array_equal(myTensor.get(), array_of_zeros)
    myTensor = be.empty((100, 100))                     # 4.
    myTensor.fill(0)
    yourTensor = be.zeros((100, 100))                   # 5.
    myTensor = yourTensor.copy(yourTensor)
    assert myTensor is yourTensor

    myNumpyArray = myTensor.get()
    assert isinstance(myNumpyArray, np.ndarray) and myNumpyArray.shape == (100, 100)

    rng = np.random.default_rng(1)
    a_host = rng.uniform(0.5, 2.0, (100, 100)).astype(np.float32)
    b_host = rng.uniform(0.5, 2.0, (100, 100)).astype(np.float32)
    myTensor, yourTensor = be.array(a_host), be.array(b_host)

    # fancy slicing
    np.testing.assert_array_equal(myTensor[:, 1].get(), a_host[:, 1:2])
    np.testing.assert_array_equal(myTensor[:, 3:10].get(), a_host[:, 3:10])

    def value(tree):
        out = be.empty(tree.shape)
        out[:] = tree
        return out.get()

    np.testing.assert_allclose(value(myTensor * yourTensor), a_host * b_host, rtol=1e-6)
    np.testing.assert_allclose(value(myTensor + yourTensor), a_host + b_host, rtol=1e-6)
    np.testing.assert_allclose(value(be.exp(myTensor)), np.exp(a_host), rtol=1e-6)
    np.testing.assert_allclose(value(be.sqrt(myTensor)), np.sqrt(a_host), rtol=1e-6)
    np.testing.assert_array_equal(value(myTensor == yourTensor), (a_host == b_host).astype(np.float32))
    np.testing.assert_array_equal(value(myTensor > yourTensor), (a_host > b_host).astype(np.float32))
    np.testing.assert_allclose(value(be.dot(myTensor, yourTensor)), a_host @ b_host, rtol=1e-5)
    np.testing.assert_allclose(value(be.max(myTensor)), a_host.max(keepdims=True))
    np.testing.assert_allclose(value(be.mean(myTensor)), a_host.mean(keepdims=True), rtol=1e-5)

    # the logistic function, built lazily and executed by assignment
    f = 1 / (1 + be.exp(-1 * myTensor))
    assert isinstance(f, OpTreeNode)
    fval = be.empty((100, 100))  # allocate space for output
    fval[:] = f                  # execute the op-tree
    np.testing.assert_allclose(fval.get(), 1 / (1 + np.exp(-a_host)), rtol=1e-6)
    NervanaObject.be = None


def test_op_tree_creation_ways(be):
    x1 = be.array(np.full((2, 3), 2.0), name='x1')
    x2 = be.array(np.full((2, 3), 3.0), name='x2')
    t1 = x1 * x2
    t2 = x1 - x2
    # 1. operator overloads
    for f in (x1 + x2, x1 + t1, t1 + t2):
        assert isinstance(f, OpTreeNode) and f[0]['op'] == 'add' and f.shape == (2, 3)
    assert str(x1 + t1) == "({'shape': (2, 3), 'op': 'add'}, x1, ({'shape': (2, 3), 'op': 'mul'}, x1, x2))"
    # 2. backend functions
    f = be.mean(x1)
    assert isinstance(f, OpTreeNode)
    np.testing.assert_allclose(f.asnumpyarray(), [[2.0]])
    # 3. build: type checking and the shape; 'assign' executes
    a, b = x1, x2
    f = OpTreeNode.build("add", a, b)  # binary ops
    assert f[0] == {'shape': (2, 3), 'op': 'add'}
    out_buffer = be.empty((2, 3))
    result = OpTreeNode.build("sqrt", a, None, out=out_buffer)  # unary ops
    assert result is out_buffer
    np.testing.assert_allclose(out_buffer.get(), np.sqrt(2.0) * np.ones((2, 3)), rtol=1e-6)
    # 4. the constructor: no checks, no shape
    op_dict = {'op': 'mul'}
    g = OpTreeNode(op_dict, a, b)
    assert g[0] is op_dict and g[1] is a and g[2] is b


def test_op_tree_execution_under_the_hood(be):
    x0 = be.ones((2, 2), name='x0')
    x1 = be.ones((2, 2), name='x1')
    f = x0 + x1
    f_val = be.empty((2, 2))
    # 1. + 2. an assign op-tree built and executed by build
    assert OpTreeNode.build("assign", f_val, f) is f_val
    np.testing.assert_array_equal(f_val.get(), np.full((2, 2), 2.0))
    # the same, executed explicitly
    f_val[:] = 0
    node = OpTreeNode({"op": "assign"}, f_val, x0 * 3 + x1)
    assert node.execute() is f_val
    np.testing.assert_array_equal(f_val.get(), np.full((2, 2), 4.0))


def test_modifying_the_post_order_stack(be):
    x0 = be.array(np.full((2, 2), 1.0), name='x0')
    x1 = be.array(np.full((2, 2), 2.0), name='x1')
    x2 = be.array(np.full((2, 2), 5.0), name='x2')
    f = x0 * x1 + x1
    stack = f.traverse(list())
    assert [s if isinstance(s, Tensor) else s['op'] for s in stack] == [x0, x1, 'mul', x1, 'add']
    # swap every x1 for x2 in the nested-list form and rebuild
    as_list = OpTreeNode.optree_to_list(f)

    def swap(items):
        return [swap(i) if isinstance(i, list) else (x2 if i is x1 else i) for i in items]
    g = OpTreeNode.list_to_optree(swap(as_list))
    assert str(g) == ("({'shape': (2, 2), 'op': 'add'}, ({'shape': (2, 2), 'op': 'mul'}, x0, x2), x2)")
    np.testing.assert_array_equal(g.asnumpyarray(), np.full((2, 2), 10.0))


def test_autodiff_example_op_trees_without_autodiff(be):
    x0 = be.array(np.ones((3, 3)) * 1., name='x0')
    x1 = be.array(np.ones((3, 3)) * 2., name='x1')
    print('# example 0')
    f = x0 * x0 + x0 * x1
    assert str(f) == ("({'shape': (3, 3), 'op': 'add'}, ({'shape': (3, 3), 'op': 'mul'}, x0, x0), "
                      "({'shape': (3, 3), 'op': 'mul'}, x0, x1))")
    np.testing.assert_array_equal(f.asnumpyarray(), np.full((3, 3), 3.0))
    f = be.tanh((x0 * x1) + (x0 / x1))
    np.testing.assert_allclose(f.asnumpyarray(), np.tanh(np.full((3, 3), 2.5)), rtol=1e-6)


def test_dynamically_generated_op_tree(be):
    host = np.random.default_rng(3).integers(10, size=(3, 3))
    x0 = be.array(host, name='x0')

    def my_loop(x):
        y = be.zeros(OpTreeNode.shape(x), name='tensor-zero')
        # The seed writes range(x.get()[0, 0]): get() returns float32 values in
        # neon as here, which range() rejects in Python 2 and 3 alike.
        for _ in range(int(x.get()[0, 0])):
            y = y + x
        return y

    def my_condition(x):
        if x.get()[0, 0] % 2 == 0:
            return be.sig(x)
        else:
            return be.tanh(x)

    f = my_loop(x0) + my_condition(x0)
    assert isinstance(f, OpTreeNode) and f.shape == (3, 3)
    n = int(host[0, 0])
    activation = 1 / (1 + np.exp(-host)) if n % 2 == 0 else np.tanh(host)
    np.testing.assert_allclose(f.asnumpyarray(), n * host + activation, rtol=1e-5)
    # the op-tree's text names the tensors
    assert "tensor-zero" in str(f) and "x0" in str(f)


def test_op_tree_shape_called_on_the_class(be):
    t = be.zeros((4, 5))
    assert OpTreeNode.shape(t) == (4, 5)
    assert OpTreeNode.shape(t + t) == (4, 5)
    assert OpTreeNode.shape(3.0) == (1, 1)
    assert (t + 1).shape == (4, 5)
