"""deploy/: the KServe manifests are well-formed and name what vinfer serve
provides; the ServingRuntime's arguments start the server. (No Kubernetes
here: the manifests are checked, the server runs on loopback.)"""
import os
import re
import signal
import subprocess
import urllib.request

import yaml

CLI = os.environ.get("VINFER_CLI", "build/vinfer")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEPLOY = os.path.join(ROOT, "deploy")


def load(name):
    with open(os.path.join(DEPLOY, "kserve", name)) as f:
        return yaml.safe_load(f)


def test_manifests_fit_together():
    rt, isvc = load("servingruntime.yaml"), load("inferenceservice.yaml")
    assert rt["apiVersion"] == "serving.kserve.io/v1alpha1" and rt["kind"] == "ServingRuntime"
    assert isvc["apiVersion"] == "serving.kserve.io/v1beta1" and isvc["kind"] == "InferenceService"
    assert "v2" in rt["spec"]["protocolVersions"]
    model = isvc["spec"]["predictor"]["model"]
    assert model["runtime"] == rt["metadata"]["name"] and model["protocolVersion"] == "v2"
    assert model["modelFormat"]["name"] in [f["name"] for f in rt["spec"]["supportedModelFormats"]]
    c = rt["spec"]["containers"][0]
    assert c["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert c["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
    assert c["ports"][0]["containerPort"] == 8000


def test_dockerfile_serves_on_port_8000_on_every_interface():
    text = open(os.path.join(DEPLOY, "Dockerfile")).read()
    entry = re.search(r"^ENTRYPOINT (\[.*\])$", text, re.M)
    assert entry and yaml.safe_load(entry.group(1)) == ["vinfer", "serve", "--host", "0.0.0.0", "--port", "8000"]
    assert "EXPOSE 8000" in text and "vinfer-serve" in text


def test_runtime_arguments_start_the_server():
    args = load("servingruntime.yaml")["spec"]["containers"][0]["args"]
    # What KServe would run, with the model it would download replaced by a built-in one.
    args = [a.replace("{{.Name}}", "densenet121").replace("/mnt/models/model.onnx", "densenet121") for a in args]
    p = subprocess.Popen([CLI, "serve", "--port", "0", "--tune-cache", "", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r":(\d+) ", p.stdout.readline()).group(1))
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/models/densenet121/ready", timeout=30) as r:
            assert r.status == 200
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=60) == 0
