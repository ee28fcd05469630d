#!/usr/bin/env python3
"""Keras networks with random weights for vinfer's Keras parity test.

    .venv-peers/bin/python tests/models/export_keras.py OUT_DIR [densenet121 vgg16 ...|all]

For each NAME: keras.applications' network with weights=None, every
BatchNormalization given random moving statistics and affine parameters; writes
NAME.weights.h5 (Keras 3's save_weights), NAME.k2.h5 (the same weights through
tf_keras, Keras 2's format: the *_tf_dim_ordering_tf_kernels.h5 layout),
keras_NAME.input.npy (1x224x224x3) and keras_NAME.tf.npy (Keras's output, the
softmax probabilities). Labels are meaningless. Needs TensorFlow (scripts/peers).
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402

APPS = {"densenet121": "DenseNet121", "densenet169": "DenseNet169", "densenet201": "DenseNet201", "vgg16": "VGG16",
        "vgg19": "VGG19", "resnet50": "ResNet50"}


def main():
    out = sys.argv[1]
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
        np.save(os.path.join(out, "keras_" + name + ".tf.npy"), y.astype("f4"))
        print(f"keras:{name}: exported (tensorflow {tf.__version__}, keras {keras.__version__})", flush=True)


if __name__ == "__main__":
    main()
