"""HTTPS and authentication with stock kubectl: the API server's generated PKI,
client certificates (CN = user, O = groups), a static token file, anonymous requests,
and `kubectl auth whoami` (SelfSubjectReview).

Run from the repository root:  /usr/bin/python3 -m pytest tests/e2e/test_security.py -q
"""

import json
import os
import ssl
import subprocess
import urllib.error

import pytest

from conftest import SERVER_BIN, SHEPHERD_BIN, http_request, run_kubectl

TOKENS = 'sekret-token,alice,uid-42,"devs,ops"\n'


@pytest.fixture(scope="module")
def secure(server_factory, tmp_path_factory):
    """An HTTPS API server with a token file; its PKI has a node n1 as well."""
    workdir = str(tmp_path_factory.mktemp("secure"))
    token_file = os.path.join(workdir, "tokens.csv")
    with open(token_file, "w") as f:
        f.write(TOKENS)
    srv = server_factory(extra_args=["--token-auth-file", token_file], tls=True)
    subprocess.run([SHEPHERD_BIN, "pki", "--dir", srv.pki_dir, "--server", srv.base_url,
                    "--nodes", "n1"], check=True, timeout=30)
    home = str(tmp_path_factory.mktemp("kubectl-home"))

    def kubectl(kubeconfig, *args):
        cache = os.path.join(home, "cache")
        os.makedirs(cache, exist_ok=True)
        srv_view = type("S", (), {"kubeconfig": kubeconfig})
        return run_kubectl(srv_view, cache, "1.33", *args)

    return srv, kubectl


def whoami(kubectl, kubeconfig, *extra):
    rc, out, err = kubectl(kubeconfig, "auth", "whoami", "-o", "json", *extra)
    assert rc == 0, err
    return json.loads(out)["status"]["userInfo"]


def test_every_identity_authenticates_with_its_certificate(secure):
    srv, kubectl = secure
    pki = srv.pki_dir
    assert whoami(kubectl, os.path.join(pki, "admin.kubeconfig")) == {
        "username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}
    assert whoami(kubectl, os.path.join(pki, "scheduler.kubeconfig")) == {
        "username": "system:kube-scheduler", "groups": ["system:authenticated"]}
    assert whoami(kubectl, os.path.join(pki, "controller-manager.kubeconfig"))["username"] == \
        "system:kube-controller-manager"
    assert whoami(kubectl, os.path.join(pki, "node-n1.kubeconfig")) == {
        "username": "system:node:n1", "groups": ["system:nodes", "system:authenticated"]}
    # And the admin works as usual over HTTPS.
    rc, out, err = kubectl(os.path.join(pki, "admin.kubeconfig"), "create", "configmap", "tls-cm",
                           "--from-literal=k=v")
    assert rc == 0, err
    rc, out, err = kubectl(os.path.join(pki, "admin.kubeconfig"), "get", "configmap", "tls-cm",
                           "-o", "jsonpath={.data.k}")
    assert (rc, out) == (0, "v"), err


def test_tokens_and_anonymous(secure, tmp_path):
    srv, kubectl = secure
    cfg = str(tmp_path / "token.kubeconfig")
    with open(cfg, "w") as f:
        f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
                "    server: %s\n    certificate-authority: %s\n"
                "contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
                "users:\n- name: u\n  user: {}\n" % (srv.base_url, os.path.join(srv.pki_dir, "ca.crt")))
    assert whoami(kubectl, cfg, "--token", "sekret-token") == {
        "username": "alice", "uid": "uid-42", "groups": ["devs", "ops", "system:authenticated"]}
    rc, out, err = kubectl(cfg, "get", "pods", "--token", "wrong-token")
    assert rc != 0 and "Unauthorized" in err, (rc, out, err)
    # No credentials at all (kubectl would prompt for a password): system:anonymous.
    anonymous = srv.client_context(None)
    st, _, body = http_request(srv.base_url, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                               {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                               context=anonymous)
    assert st == 201 and json.loads(body)["status"]["userInfo"] == {
        "username": "system:anonymous", "groups": ["system:unauthenticated"]}, body
    st, _, body = http_request(srv.base_url, "GET", "/version", context=anonymous)
    assert st == 200, body


def test_certificates_of_another_ca_and_plain_http_are_refused(secure, tmp_path):
    srv, _ = secure
    other = str(tmp_path / "other")
    subprocess.run([SHEPHERD_BIN, "pki", "--dir", other], check=True, timeout=30)
    ctx = ssl.create_default_context(cafile=os.path.join(srv.pki_dir, "ca.crt"))
    ctx.load_cert_chain(os.path.join(other, "admin.crt"), os.path.join(other, "admin.key"))
    st, _, body = http_request(srv.base_url, "GET", "/api/v1/namespaces", context=ctx)
    status = json.loads(body)
    assert st == 401 and status["reason"] == "Unauthorized" and status["code"] == 401, body
    # A client that does not trust the cluster CA does not get through the handshake.
    with pytest.raises(urllib.error.URLError):
        http_request(srv.base_url, "GET", "/version", context=ssl.create_default_context())
    # The HTTPS port does not speak plain HTTP.
    with pytest.raises(Exception):
        http_request("http://127.0.0.1:%d" % srv.port, "GET", "/version", timeout=5)


def test_plain_http_only_on_loopback(tmp_path):
    proc = subprocess.run([SERVER_BIN, "--data-dir", str(tmp_path / "d"), "--port", "0", "--plain-http",
                           "--bind-address", "0.0.0.0"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "loopback" in proc.stderr, proc.stderr
