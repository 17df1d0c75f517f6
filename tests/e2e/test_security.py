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


def token_kubeconfig(srv, path, token=None, namespace=None):
    """A kubeconfig trusting the cluster CA whose user has ``token`` (or no credentials)."""
    context = "{cluster: c, user: u%s}" % (", namespace: %s" % namespace if namespace else "")
    user = "{token: %s}" % token if token else "{}"
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
                "    server: %s\n    certificate-authority: %s\n"
                "contexts:\n- name: c\n  context: %s\ncurrent-context: c\n"
                "users:\n- name: u\n  user: %s\n"
                % (srv.base_url, os.path.join(srv.pki_dir, "ca.crt"), context, user))
    return path


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
    cfg = token_kubeconfig(srv, str(tmp_path / "token.kubeconfig"))
    assert whoami(kubectl, cfg, "--token", "sekret-token") == {
        "username": "alice", "uid": "uid-42", "groups": ["devs", "ops", "system:authenticated"]}
    rc, out, err = kubectl(cfg, "get", "pods", "--token", "wrong-token")
    assert rc != 0 and "You must be logged in to the server" in err, (rc, out, err)
    # No credentials at all (kubectl would prompt for a password): system:anonymous, who
    # may not even ask who it is (system:basic-user is for authenticated users).
    anonymous = srv.client_context(None)
    st, _, body = http_request(srv.base_url, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                               {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                               context=anonymous)
    assert st == 403 and json.loads(body)["message"] == (
        'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource '
        '"selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope'), body
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


# --------------------------------------------------------------------------- authorization


def as_identity(srv, identity):
    """(status, body) of a request with ``identity``'s client certificate (None: anonymous)."""
    ctx = srv.client_context(identity)

    def call(method, path, body=None, content_type=None):
        st, _, raw = http_request(srv.base_url, method, path, body, context=ctx, content_type=content_type)
        try:
            return st, json.loads(raw) if raw else None
        except ValueError:
            return st, raw
    return call


def test_anonymous_sees_only_health_and_version(secure):
    srv, _ = secure
    anon = as_identity(srv, None)
    for path in ("/healthz", "/readyz", "/livez", "/version"):
        assert anon("GET", path)[0] == 200, path
    st, body = anon("GET", "/api/v1/namespaces/default/pods")
    assert st == 403 and body["reason"] == "Forbidden", body
    assert body["message"] == ('pods is forbidden: User "system:anonymous" cannot list resource "pods" '
                               'in API group "" in the namespace "default"'), body
    assert body["details"] == {"kind": "pods"}, body
    st, body = anon("GET", "/apis")
    assert st == 403 and body["message"] == 'forbidden: User "system:anonymous" cannot get path "/apis"', body


def make_pod(admin, ns, name, node, secret=None):
    spec = {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}
    if secret:
        spec["volumes"] = [{"name": "s", "secret": {"secretName": secret}}]
    st, body = admin("POST", "/api/v1/namespaces/%s/pods" % ns,
                     {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
    assert st == 201, body


def test_scheduler_binds_but_may_not_edit_pods(secure, tmp_path):
    srv, kubectl = secure
    admin, sched = as_identity(srv, "admin"), as_identity(srv, "scheduler")
    st, body = admin("POST", "/api/v1/namespaces/default/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "to-bind"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert st == 201, body
    st, body = sched("POST", "/api/v1/namespaces/default/pods/to-bind/binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "to-bind"},
        "target": {"kind": "Node", "name": "n1"}})
    assert st == 201, body
    cfg = os.path.join(srv.pki_dir, "scheduler.kubeconfig")
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/image: busybox$/image: busybox:edited/' \"$1\"\n")
    editor.chmod(0o755)
    old = os.environ.get("KUBE_EDITOR")
    os.environ["KUBE_EDITOR"] = str(editor)
    try:
        rc, out, err = kubectl(cfg, "edit", "pod", "to-bind")
    finally:
        if old is None:
            del os.environ["KUBE_EDITOR"]
        else:
            os.environ["KUBE_EDITOR"] = old
    assert rc != 0 and 'User "system:kube-scheduler" cannot patch resource "pods"' in err, (rc, out, err)
    # kubectl auth can-i agrees.
    assert kubectl(cfg, "auth", "can-i", "create", "pods", "--subresource=binding")[:2] == (0, "yes\n")
    rc, out, _ = kubectl(cfg, "auth", "can-i", "update", "pods")
    assert (rc, out) == (1, "no\n")
    assert kubectl(os.path.join(srv.pki_dir, "admin.kubeconfig"), "auth", "can-i", "*", "*")[:2] == (0, "yes\n")


def test_node_reaches_only_its_own_pods_and_their_secrets(secure):
    srv, _ = secure
    subprocess.run([SHEPHERD_BIN, "pki", "--dir", srv.pki_dir, "--server", srv.base_url, "--nodes", "n1,n2"],
                   check=True, timeout=30)
    admin, n1 = as_identity(srv, "admin"), as_identity(srv, "node-n1")
    for name in ("used", "unused"):
        st, body = admin("POST", "/api/v1/namespaces/default/secrets",
                         {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}})
        assert st == 201, body
    make_pod(admin, "default", "on-n1", "n1", secret="used")
    make_pod(admin, "default", "on-n2", "n2")
    assert n1("GET", "/api/v1/namespaces/default/secrets/used")[0] == 200
    st, body = n1("GET", "/api/v1/namespaces/default/secrets/unused")
    assert st == 403 and body["message"].endswith(
        "no relationship found between node 'n1' and this object"), body
    status = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    st, body = n1("PATCH", "/api/v1/namespaces/default/pods/on-n1/status", status,
                  content_type="application/merge-patch+json")
    assert st == 200, body
    st, body = n1("PATCH", "/api/v1/namespaces/default/pods/on-n2/status", status,
                  content_type="application/merge-patch+json")
    assert st == 403 and body["message"] == (
        'pods "on-n2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to '
        'itself'), body
    # Its pods by field selector, not everyone's; its own Node and Lease only.
    assert n1("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1")[0] == 200
    assert n1("GET", "/api/v1/pods")[0] == 403
    assert n1("GET", "/api/v1/nodes/n2")[0] == 403
    st, body = n1("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
                  {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "n2"}})
    assert st == 403 and "same name as the requesting node" in body["message"], body


def test_roles_and_bindings_grant_namespaced_access(secure, tmp_path):
    srv, kubectl = secure
    admin_cfg = os.path.join(srv.pki_dir, "admin.kubeconfig")
    for args in (("create", "namespace", "team-a"), ("create", "namespace", "team-b"),
                 ("create", "role", "pod-reader", "-n", "team-a", "--verb=get,list,watch", "--resource=pods"),
                 ("create", "rolebinding", "alice-reads", "-n", "team-a", "--role=pod-reader", "--user=alice")):
        rc, out, err = kubectl(admin_cfg, *args)
        assert rc == 0, (args, err)
    cfg = token_kubeconfig(srv, str(tmp_path / "alice.kubeconfig"), token="sekret-token")
    rc, out, err = kubectl(cfg, "get", "pods", "-n", "team-a")
    assert rc == 0, err
    rc, out, err = kubectl(cfg, "get", "pods", "-n", "team-b")
    assert rc != 0 and ('pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the '
                        'namespace "team-b"') in err, err
    assert kubectl(cfg, "auth", "can-i", "list", "pods", "-n", "team-a")[:2] == (0, "yes\n")
    # kubectl auth can-i --list (SelfSubjectRulesReview) shows the same grant.
    rc, out, err = kubectl(cfg, "auth", "can-i", "--list", "-n", "team-a")
    assert rc == 0, err
    rows = [line.split() for line in out.splitlines()[1:]]
    assert ["pods", "[]", "[]", "[get", "list", "watch]"] in rows, out
    rc, out, err = kubectl(cfg, "auth", "can-i", "--list", "-n", "team-b")
    assert rc == 0 and not any(r and r[0] == "pods" for r in (l.split() for l in out.splitlines())), out
    assert kubectl(cfg, "auth", "can-i", "delete", "pods", "-n", "team-a")[:2] == (1, "no\n")
    # The bootstrap policy is there, as kubectl shows it.
    rc, out, err = kubectl(admin_cfg, "get", "clusterrolebinding", "cluster-admin", "-o", "wide")
    assert rc == 0 and "ClusterRole/cluster-admin" in out and "system:masters" in out, (out, err)


def test_impersonation_needs_the_impersonate_verb(secure, tmp_path):
    srv, kubectl = secure
    admin_cfg = os.path.join(srv.pki_dir, "admin.kubeconfig")
    # The admin (system:masters) may impersonate anyone; the impersonated user keeps nothing
    # of the admin's identity.
    assert whoami(kubectl, admin_cfg, "--as", "bob") == {"username": "bob", "groups": ["system:authenticated"]}
    assert whoami(kubectl, admin_cfg, "--as", "bob", "--as-group", "qa", "--as-group", "ops") == {
        "username": "bob", "groups": ["qa", "ops", "system:authenticated"]}
    assert whoami(kubectl, admin_cfg, "--as", "system:serviceaccount:kube-system:builder") == {
        "username": "system:serviceaccount:kube-system:builder",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"]}
    rc, out, err = kubectl(admin_cfg, "get", "pods", "-n", "default", "--as", "bob")
    assert rc != 0 and 'User "bob" cannot list resource "pods"' in err, err
    assert kubectl(admin_cfg, "auth", "can-i", "list", "pods", "--as", "bob")[:2] == (1, "no\n")
    assert kubectl(admin_cfg, "auth", "can-i", "list", "pods", "--as", "bob", "--as-group", "system:masters")[:2] \
        == (0, "yes\n")

    # alice (token) may not impersonate until a role lets her impersonate exactly bob.
    cfg = token_kubeconfig(srv, str(tmp_path / "alice.kubeconfig"), token="sekret-token")
    rc, out, err = kubectl(cfg, "get", "pods", "--as", "bob")
    assert rc != 0 and ('users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API '
                        'group "" at the cluster scope') in err, err
    for args in (("create", "clusterrole", "impersonate-bob", "--verb=impersonate", "--resource=users",
                  "--resource-name=bob"),
                 ("create", "clusterrolebinding", "alice-as-bob", "--clusterrole=impersonate-bob", "--user=alice")):
        rc, out, err = kubectl(admin_cfg, *args)
        assert rc == 0, (args, err)
    assert whoami(kubectl, cfg, "--as", "bob") == {"username": "bob", "groups": ["system:authenticated"]}
    rc, out, err = kubectl(cfg, "get", "pods", "--as", "carol")
    assert rc != 0 and 'users "carol" is forbidden' in err, err
    # Groups need their own grant: bob may be impersonated, system:masters may not.
    rc, out, err = kubectl(cfg, "get", "pods", "--as", "bob", "--as-group", "system:masters")
    assert rc != 0 and ('groups "system:masters" is forbidden: User "alice" cannot impersonate resource '
                        '"groups" in API group "" at the cluster scope') in err, err
    # Groups without a user are a bad request (kubectl refuses this itself; raw HTTP here).
    ctx = srv.client_context("admin")
    st, _, raw = http_request(srv.base_url, "GET", "/api/v1/namespaces", context=ctx,
                              headers={"Impersonate-Group": "devs"})
    body = json.loads(raw)
    assert st == 400 and body["reason"] == "BadRequest", body
    assert "without impersonating a user" in body["message"], body


def test_rbac_writes_cannot_escalate(secure, tmp_path):
    srv, kubectl = secure
    admin_cfg = os.path.join(srv.pki_dir, "admin.kubeconfig")

    def admin(*args):
        rc, out, err = kubectl(admin_cfg, *args)
        assert rc == 0, (args, err)

    admin("create", "namespace", "esc")
    # alice (token user) may manage roles and bindings in "esc" and read pods there.
    admin("create", "role", "rbac-editor", "-n", "esc", "--verb=get,list,create,update,patch,delete",
          "--resource=roles,rolebindings")
    admin("create", "role", "pod-reader", "-n", "esc", "--verb=get,list", "--resource=pods")
    admin("create", "rolebinding", "alice-rbac", "-n", "esc", "--role=rbac-editor", "--user=alice")
    admin("create", "rolebinding", "alice-pods", "-n", "esc", "--role=pod-reader", "--user=alice")
    cfg = token_kubeconfig(srv, str(tmp_path / "alice.kubeconfig"), token="sekret-token", namespace="esc")

    # What she holds she may grant; what she does not hold she may not.
    rc, out, err = kubectl(cfg, "create", "role", "reads", "--verb=get", "--resource=pods")
    assert rc == 0, err
    rc, out, err = kubectl(cfg, "create", "role", "deletes", "--verb=get,delete,deletecollection",
                           "--resource=pods")
    assert rc != 0, out
    assert ('roles.rbac.authorization.k8s.io "deletes" is forbidden: user "alice" (groups=["devs" "ops" '
            '"system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
            '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "deletecollection"]}') in err, err
    rc, out, err = kubectl(cfg, "create", "rolebinding", "bob-reads", "--role=reads", "--user=bob")
    assert rc == 0, err
    rc, out, err = kubectl(cfg, "create", "rolebinding", "alice-admin", "--clusterrole=admin", "--user=alice")
    assert rc != 0 and 'rolebindings.rbac.authorization.k8s.io "alice-admin" is forbidden' in err, err
    assert "is attempting to grant RBAC permissions not currently held" in err, err
    # Editing a role she made into more than she holds is refused too (patch goes through the same check).
    rc, out, err = kubectl(cfg, "patch", "role", "reads", "--type=json",
                           "-p", '[{"op":"add","path":"/rules/0/verbs/-","value":"delete"}]')
    assert rc != 0 and "is attempting to grant RBAC permissions not currently held" in err, err
    rc, out, err = kubectl(cfg, "label", "role", "reads", "team=esc")
    assert rc == 0, err  # a change that grants nothing new is fine

    # "escalate" on roles and "bind" on the admin ClusterRole lift the checks.
    admin("create", "role", "escalator", "-n", "esc", "--verb=escalate", "--resource=roles")
    admin("create", "rolebinding", "alice-escalates", "-n", "esc", "--role=escalator", "--user=alice")
    admin("create", "role", "admin-binder", "-n", "esc", "--verb=bind", "--resource=clusterroles",
          "--resource-name=admin")
    admin("create", "rolebinding", "alice-binds", "-n", "esc", "--role=admin-binder", "--user=alice")
    rc, out, err = kubectl(cfg, "create", "role", "deletes", "--verb=get,delete", "--resource=pods")
    assert rc == 0, err
    rc, out, err = kubectl(cfg, "create", "rolebinding", "bob-admin", "--clusterrole=admin", "--user=bob")
    assert rc == 0, err
    rc, out, err = kubectl(cfg, "create", "rolebinding", "bob-edit", "--clusterrole=edit", "--user=bob")
    assert rc != 0 and "is attempting to grant RBAC permissions not currently held" in err, err


def test_audit_log_records_every_request(server_factory, tmp_path):
    log_path = str(tmp_path / "audit.log")
    srv = server_factory(extra_args=["--audit-log-path", log_path])
    home = str(tmp_path / "home")
    os.makedirs(os.path.join(home, "cache"))

    def kubectl(kubeconfig, *args):
        view = type("S", (), {"kubeconfig": kubeconfig})
        return run_kubectl(view, os.path.join(home, "cache"), "1.33", *args)

    admin_cfg = os.path.join(srv.pki_dir, "admin.kubeconfig")
    rc, out, err = kubectl(admin_cfg, "create", "configmap", "audited", "--from-literal=k=v")
    assert rc == 0, err
    rc, out, err = kubectl(admin_cfg, "get", "pods", "-n", "kube-system", "--as", "eve")
    assert rc != 0 and "forbidden" in err
    st, _, _ = http_request(srv.base_url, "GET", "/api/v1/namespaces", context=srv.client_context(None),
                            headers={"Authorization": "Bearer nope"})
    assert st == 401
    with open(log_path) as f:
        events = [json.loads(line) for line in f]
    assert all(e["kind"] == "Event" and e["apiVersion"] == "audit.k8s.io/v1" and e["level"] == "Metadata"
               for e in events)
    created = [e for e in events if e["verb"] == "create" and e.get("objectRef", {}).get("resource") == "configmaps"]
    assert len(created) == 1, events
    c = created[0]
    assert c["user"]["username"] == "kubernetes-admin" and "system:masters" in c["user"]["groups"]
    assert c["objectRef"] == {"resource": "configmaps", "namespace": "default", "apiVersion": "v1"}
    assert c["responseStatus"] == {"metadata": {}, "code": 201}
    assert c["stage"] == "ResponseComplete" and c["sourceIPs"] == ["127.0.0.1"]
    assert c["userAgent"].startswith("kubectl") and c["annotations"]["authorization.k8s.io/decision"] == "allow"
    denied = [e for e in events if e.get("impersonatedUser", {}).get("username") == "eve"]
    assert denied and denied[-1]["responseStatus"] == {"metadata": {}, "status": "Failure", "reason": "Forbidden",
                                                       "code": 403}, denied
    assert denied[-1]["user"]["username"] == "kubernetes-admin"
    assert denied[-1]["annotations"]["authorization.k8s.io/decision"] == "forbid"
    unauth = [e for e in events if e["responseStatus"]["code"] == 401]
    assert len(unauth) == 1 and unauth[0]["requestURI"] == "/api/v1/namespaces" and "username" not in unauth[0]["user"]
    assert all(e["auditID"] for e in events) and len({e["auditID"] for e in events}) == len(events)
