#!/usr/bin/env python3
"""Keras networks with random weights for vinfer's Keras parity test.

    .venv-peers/bin/python tests/models/export_keras.py OUT_DIR [densenet121 vgg16 ...|all]

For each NAME: keras.applications' network with weights=None, every
BatchNormalization given random moving statistics and affine parameters; writes
NAME.weights.h5 (Keras 3's save_weights), NAME.k2.h5 (the same weights through
tf_keras, Keras 2's format: the *_tf_dim_ordering_tf_kernels.h5 layout),
keras_NAME.input.npy (1x224x224x3) and keras_NAME.tf.npy (Keras's output, the
softmax probabilities). Labels are meaningless. Needs TensorFlow (scripts/peers).

    .venv-peers/bin/python tests/models/export_keras.py tests/data --ci    # CI's committed fixture
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402

APPS = {"densenet121": "DenseNet121", "densenet169": "DenseNet169", "densenet201": "DenseNet201", "vgg16": "VGG16",
        "vgg19": "VGG19", "resnet50": "ResNet50"}


def ci_fixture(out):
    """tests/data/keras_densenet121.tar.xz: Keras DenseNet121 weights drawn from 15
    levels per tensor (so that xz shrinks 33 MB to ~4.5 MB; the network and the file
    format are exactly Keras's), the squirrel photo as Keras preprocesses it for
    DenseNet (load_img -> img_to_array -> preprocess_input), and Keras's output."""
    import tarfile
    import keras
    from keras.applications import densenet
    from keras.utils import img_to_array, load_img
    rng = np.random.default_rng(5)
    m = keras.applications.DenseNet121(weights=None)
    ws = []
    for w in m.get_weights():
        if w.ndim > 1:
            s = np.abs(w).max() / 7 or 1.0
            ws.append((rng.integers(-7, 8, w.shape) * s).astype("f4"))
        else:  # BatchNorm vectors: positive, so moving_variance stays valid
            ws.append((rng.integers(4, 13, w.shape) / 8).astype("f4"))
    m.set_weights(ws)
    here = os.path.dirname(os.path.abspath(__file__))
    img = os.path.join(here, "..", "data", "images", "squirrel_cls.jpg")
    x = densenet.preprocess_input(img_to_array(load_img(img, target_size=(224, 224)))[None])
    y = m.predict(x, verbose=0)
    tmp = os.path.join(out, "keras_ci")
    os.makedirs(tmp, exist_ok=True)
    m.save_weights(os.path.join(tmp, "densenet121.weights.h5"))
    np.save(os.path.join(tmp, "keras_densenet121.input.npy"), x.astype("f4"))
    np.save(os.path.join(tmp, "keras_densenet121.tf.npy"), y.astype("f4"))
    with tarfile.open(os.path.join(out, "keras_densenet121.tar.xz"), "w:xz", preset=9) as t:
        for f in ("densenet121.weights.h5", "keras_densenet121.input.npy", "keras_densenet121.tf.npy"):
            t.add(os.path.join(tmp, f), arcname=f)


def main():
    out = sys.argv[1]
    if sys.argv[2:] == ["--ci"]:
        return ci_fixture(out)
    names = sys.argv[2:] or ["densenet121", "resnet50"]
    if names == ["all"]:
        names = list(APPS)
    os.makedirs(out, exist_ok=True)
    import keras
    import tensorflow as tf
    import tf_keras
    rng = np.random.default_rng(3)
    for name in names:
        m = getattr(keras.applications, APPS[name])(weights=None)
        for layer in m.layers:
            if isinstance(layer, keras.layers.BatchNormalization):
                c = layer.gamma.shape[0]
                layer.set_weights([rng.uniform(0.75, 1.25, c).astype("f4"), rng.normal(0, 0.1, c).astype("f4"),
                                   rng.normal(0, 0.1, c).astype("f4"), rng.uniform(0.75, 1.25, c).astype("f4")])
        x = rng.uniform(-2, 2, (1, 224, 224, 3)).astype("f4")
        y = m(x, training=False).numpy()
        m.save_weights(os.path.join(out, name + ".weights.h5"))
        m2 = getattr(tf_keras.applications, APPS[name])(weights=None)
        m2.set_weights(m.get_weights())
        m2.save_weights(os.path.join(out, name + ".k2.h5"))
        np.testing.assert_allclose(m2(x, training=False).numpy(), y, rtol=1e-4, atol=1e-6)
        np.save(os.path.join(out, "keras_" + name + ".input.npy"), x)
        # Says the input is random, not Keras's preprocessing of the photo (test_model_parity.cpp).
        open(os.path.join(out, "keras_" + name + ".input_is_random"), "w").close()
        np.save(os.path.join(out, "keras_" + name + ".tf.npy"), y.astype("f4"))
        print(f"keras:{name}: exported (tensorflow {tf.__version__}, keras {keras.__version__})", flush=True)


if __name__ == "__main__":
    main()
