"""ServiceAccount tokens with stock kubectl: `kubectl create token` (TokenRequest on
serviceaccounts/token), the token authenticating as the ServiceAccount, RBAC for it, and
the token refused once its ServiceAccount or bound pod is gone, or after it expires (the
server is restarted under libfaketime, twelve minutes "later").

Run from the repository root:  /usr/bin/python3 -m pytest tests/e2e/test_service_account_tokens.py -q
"""

import base64
import json
import os
import time

import pytest

from conftest import run_kubectl
from test_security import token_kubeconfig

FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"


@pytest.fixture
def cluster(server_factory, tmp_path):
    srv = server_factory()
    home = str(tmp_path / "home")
    os.makedirs(os.path.join(home, "cache"))

    def kubectl(*args, kubeconfig=None):
        view = type("S", (), {"kubeconfig": kubeconfig or srv.kubeconfig})
        return run_kubectl(view, os.path.join(home, "cache"), "1.33", *args)

    def ok(*args, **kw):
        rc, out, err = kubectl(*args, **kw)
        assert rc == 0, (args, out, err)
        return out

    # A kubeconfig with the cluster's CA and no user: the token comes on the command line.
    tokcfg = str(tmp_path / "token.kubeconfig")

    def as_token(token, *args):
        token_kubeconfig(srv, tokcfg)  # written each time: the port changes on restart
        return kubectl("--token", token, *args, kubeconfig=tokcfg)

    ok("create", "namespace", "sat")
    ok("create", "serviceaccount", "default", "-n", "sat")
    return srv, ok, kubectl, as_token


def claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def header(token):
    part = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_create_token_authenticates_until_it_expires(cluster):
    srv, ok, kubectl, as_token = cluster
    before = int(time.time())
    token = ok("create", "token", "default", "-n", "sat", "--duration", "10m")
    assert token.count(".") == 2 and not token.endswith("\n")  # piped: no newline, as upstream
    c = claims(token)
    assert header(token)["alg"] == "ES256" and header(token)["kid"]
    assert c["sub"] == "system:serviceaccount:sat:default"
    assert c["iss"] == "https://kubernetes.default.svc.cluster.local"
    assert c["aud"] == ["https://kubernetes.default.svc.cluster.local"]
    assert before - 1 <= c["iat"] <= time.time() + 1 and c["exp"] == c["iat"] + 600
    sa_uid = json.loads(ok("get", "serviceaccount", "default", "-n", "sat", "-o", "json"))["metadata"]["uid"]
    assert c["kubernetes.io"]["serviceaccount"] == {"name": "default", "uid": sa_uid}

    rc, out, err = as_token(token, "auth", "whoami", "-o", "json")
    assert rc == 0, err
    info = json.loads(out)["status"]["userInfo"]
    assert info["username"] == "system:serviceaccount:sat:default"
    assert info["uid"] == sa_uid
    assert info["groups"] == ["system:serviceaccounts", "system:serviceaccounts:sat", "system:authenticated"]
    # RBAC applies to the ServiceAccount like any user: nothing until a RoleBinding grants it.
    rc, out, err = as_token(token, "get", "pods", "-n", "sat")
    assert rc != 0 and "forbidden" in err and "system:serviceaccount:sat:default" in err, err
    ok("create", "rolebinding", "sa-view", "-n", "sat", "--clusterrole=view", "--serviceaccount=sat:default")
    deadline = time.monotonic() + 10
    while True:
        rc, out, err = as_token(token, "get", "pods", "-n", "sat")
        if rc == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert rc == 0 and "No resources found" in err, (out, err)
    rc, out, err = as_token(token, "auth", "can-i", "list", "pods", "-n", "sat")
    assert out.strip() == "yes"
    rc, out, err = as_token(token, "auth", "can-i", "create", "pods", "-n", "sat")
    assert out.strip() == "no"

    # Twelve minutes later (past exp + the 60 s leeway) the same token is refused.
    srv.stop()
    srv.env = {"LD_PRELOAD": FAKETIME_LIB, "FAKETIME": "+12m", "FAKETIME_DONT_FAKE_MONOTONIC": "1",
               # the sanitizer runtime must otherwise come first in the library list
               "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"}
    try:
        srv.start()
        rc, out, err = as_token(token, "get", "pods", "-n", "sat")
        assert rc != 0 and "You must be logged in to the server" in err, (rc, out, err)
        assert "service account token has expired" in srv.log_tail(20000)
        # A fresh token works at the same (later) time: only the expired one is refused.
        fresh = ok("create", "token", "default", "-n", "sat")
        rc, out, err = as_token(fresh, "get", "pods", "-n", "sat")
        assert rc == 0, err
    finally:
        srv.stop()
        srv.env = {}
        srv.start()


def test_token_dies_with_its_service_account_and_bound_pod(cluster):
    srv, ok, kubectl, as_token = cluster
    ok("create", "serviceaccount", "robot", "-n", "sat")
    token = ok("create", "token", "robot", "-n", "sat")
    rc, out, err = as_token(token, "auth", "whoami")
    assert rc == 0 and "system:serviceaccount:sat:robot" in out, err
    ok("delete", "serviceaccount", "robot", "-n", "sat")
    rc, out, err = as_token(token, "auth", "whoami")
    assert rc != 0 and "You must be logged in to the server" in err, (out, err)
    # A new ServiceAccount of the same name has another uid: the old token stays refused.
    ok("create", "serviceaccount", "robot", "-n", "sat")
    rc, out, err = as_token(token, "auth", "whoami")
    assert rc != 0 and "You must be logged in to the server" in err, (out, err)

    # Bound to a pod: the pod's name and uid are in the token and in the user's extras.
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "sat"},
           "spec": {"serviceAccountName": "robot", "containers": [{"name": "c", "image": "busybox"}]}}
    path = os.path.join(srv.workdir, "pod.json")
    with open(path, "w") as f:
        json.dump(pod, f)
    ok("create", "-f", path)
    pod_uid = json.loads(ok("get", "pod", "p", "-n", "sat", "-o", "json"))["metadata"]["uid"]
    bound = ok("create", "token", "robot", "-n", "sat", "--bound-object-kind", "Pod", "--bound-object-name", "p")
    assert claims(bound)["kubernetes.io"]["pod"] == {"name": "p", "uid": pod_uid}
    rc, out, err = as_token(bound, "auth", "whoami", "-o", "json")
    assert rc == 0, err
    extra = json.loads(out)["status"]["userInfo"]["extra"]
    assert extra["authentication.kubernetes.io/pod-name"] == ["p"]
    assert extra["authentication.kubernetes.io/pod-uid"] == [pod_uid]
    ok("delete", "pod", "p", "-n", "sat", "--grace-period=0", "--force")
    rc, out, err = as_token(bound, "auth", "whoami")
    assert rc != 0 and "You must be logged in to the server" in err, (out, err)
    assert "service account token has been invalidated" in srv.log_tail(20000)


def test_token_request_errors_are_upstreams(cluster):
    srv, ok, kubectl, as_token = cluster
    rc, out, err = kubectl("create", "token", "default", "-n", "sat", "--duration", "5m")
    assert rc == 1 and err.strip() == (
        'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: '
        'spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes'), err
    rc, out, err = kubectl("create", "token", "nope", "-n", "sat")
    assert rc == 1 and err.strip() == 'error: failed to create token: serviceaccounts "nope" not found', err
    rc, out, err = kubectl("create", "token", "default", "-n", "sat", "--bound-object-kind", "Pod",
                           "--bound-object-name", "missing")
    assert rc == 1 and 'pods "missing" not found' in err, err
    # A pod running as another ServiceAccount cannot carry this one's token.
    path = os.path.join(srv.workdir, "other.json")
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "other", "namespace": "sat"},
                   "spec": {"containers": [{"name": "c", "image": "busybox"}]}}, f)
    ok("create", "-f", path)
    ok("create", "serviceaccount", "second", "-n", "sat")
    rc, out, err = kubectl("create", "token", "second", "-n", "sat", "--bound-object-kind", "Pod",
                           "--bound-object-name", "other")
    assert rc == 1 and ('cannot bind token for serviceaccount "second" to pod running with different '
                        'serviceaccount name.') in err, err
    # Audiences of another service are not the API's: such a token does not log in here.
    foreign = ok("create", "token", "default", "-n", "sat", "--audience", "vault")
    assert claims(foreign)["aud"] == ["vault"]
    rc, out, err = as_token(foreign, "auth", "whoami")
    assert rc != 0 and "You must be logged in to the server" in err, (out, err)
    # A node may ask only for tokens of its own pods' ServiceAccounts, bound to such a pod.
    node_cfg = srv.node_kubeconfig("tok-node")
    rc, out, err = kubectl("create", "token", "default", "-n", "sat", kubeconfig=node_cfg)
    assert rc == 1 and 'cannot create resource "serviceaccounts/token"' in err, err
    assert "no relationship found between node 'tok-node' and this object" in err, err
    path = os.path.join(srv.workdir, "onnode.json")
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "onnode", "namespace": "sat"},
                   "spec": {"nodeName": "tok-node", "containers": [{"name": "c", "image": "busybox"}]}}, f)
    ok("create", "-f", path)
    rc, out, err = kubectl("create", "token", "default", "-n", "sat", kubeconfig=node_cfg)
    assert rc == 1 and "node requested token not bound to a pod" in err, err
    uid = json.loads(ok("get", "pod", "onnode", "-n", "sat", "-o", "json"))["metadata"]["uid"]
    rc, out, err = kubectl("create", "token", "default", "-n", "sat", "--bound-object-kind", "Pod",
                           "--bound-object-name", "onnode", "--bound-object-uid", uid, kubeconfig=node_cfg)
    assert rc == 0 and claims(out)["kubernetes.io"]["pod"] == {"name": "onnode", "uid": uid}, err
    assert claims(out)["kubernetes.io"]["node"] == {"name": "tok-node"}  # no Node object exists
    rc, out, err = kubectl("create", "token", "default", "-n", "sat", "--bound-object-kind", "Pod",
                           "--bound-object-name", "other", kubeconfig=node_cfg)
    assert rc == 1 and "forbidden" in err, err
    # The full object, as `-o json` shows it.
    req = json.loads(ok("create", "token", "default", "-n", "sat", "--duration", "1h", "-o", "json"))
    assert req["kind"] == "TokenRequest" and req["apiVersion"] == "authentication.k8s.io/v1"
    assert req["spec"]["expirationSeconds"] == 3600
    assert req["status"]["token"].count(".") == 2 and req["status"]["expirationTimestamp"].endswith("Z")
