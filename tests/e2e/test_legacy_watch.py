"""The deprecated watch paths upstream still serves ({prefix}/watch/[namespaces/NS/]R[/NAME]):
raw HTTP, and Debian's ruby-kubeclient, whose watch_* methods use only these paths."""

import json
import os
import subprocess
import uuid

import pytest

pytestmark = pytest.mark.storage

RUBY_WATCH = r"""
require 'kubeclient'
url, pki, ns, name, rv, count = ARGV
ssl = { client_cert: OpenSSL::X509::Certificate.new(File.read("#{pki}/admin.crt")),
        client_key: OpenSSL::PKey.read(File.read("#{pki}/admin.key")),
        ca_file: "#{pki}/ca.crt", verify_ssl: OpenSSL::SSL::VERIFY_PEER }
client = Kubeclient::Client.new("#{url}/api", 'v1', ssl_options: ssl)
seen = 0
client.watch_config_maps(namespace: ns, name: name, resource_version: rv) do |notice|
  data = notice.object.data
  puts [notice.type, notice.object.metadata.name, data ? data.k : nil].join(' ')
  STDOUT.flush
  seen += 1
  break if seen >= count.to_i
end
"""


@pytest.fixture(scope="module")
def ns(server):
    name = "legacy-watch-" + uuid.uuid4().hex[:6]
    status, _, body = server.api.post("/api/v1/namespaces", {"metadata": {"name": name}})
    assert status == 201, body
    return name


def configmap(server, ns, name, value):
    path = "/api/v1/namespaces/%s/configmaps" % ns
    status, _, obj = server.api.put(path + "/" + name, {"metadata": {"name": name, "namespace": ns},
                                                        "data": {"k": value}})
    if status == 404:
        status, _, obj = server.api.post(path, {"metadata": {"name": name}, "data": {"k": value}})
    assert status in (200, 201), obj
    return obj


def events(raw):
    return [json.loads(line) for line in raw.decode().splitlines() if line.strip()]


def test_raw_legacy_watch_paths(server, ns):
    a = configmap(server, ns, "a", "1")
    rv = a["metadata"]["resourceVersion"]
    configmap(server, ns, "b", "1")
    configmap(server, ns, "a", "2")
    base = "/api/v1/watch/namespaces/%s/configmaps" % ns
    # A collection: every change after rv; ?watch=false does not turn it into a list.
    status, _, raw = server.api.request("GET", base + "?watch=false&timeoutSeconds=1&resourceVersion=" + rv)
    assert status == 200, raw
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events(raw)] == [("ADDED", "b"), ("MODIFIED", "a")]
    # One object by its path name.
    status, _, raw = server.api.request("GET", base + "/a?timeoutSeconds=1&resourceVersion=" + rv)
    assert status == 200, raw
    assert [(e["type"], e["object"]["data"]["k"]) for e in events(raw)] == [("MODIFIED", "2")]
    # The same name in the field selector is fine; another one is refused.
    status, _, raw = server.api.request("GET", base + "/a?timeoutSeconds=1&fieldSelector=metadata.name%3Da&"
                                        "resourceVersion=" + rv)
    assert status == 200 and len(events(raw)) == 1, raw
    status, _, body = server.api.get(base + "/a?fieldSelector=metadata.name%3Db")
    assert status == 400 and body["message"] == "fieldSelector metadata.name doesn't match requested name", body
    # All namespaces, and a group's path.
    status, _, raw = server.api.request("GET", "/api/v1/watch/configmaps?timeoutSeconds=1&resourceVersion=" + rv)
    assert status == 200 and len(events(raw)) >= 2, raw
    status, _, raw = server.api.request("GET", "/apis/apps/v1/watch/namespaces/%s/deployments?timeoutSeconds=1" % ns)
    assert status == 200, raw
    # Only GET; only resources that can be watched.
    status, _, body = server.api.post(base, {"metadata": {"name": "c"}})
    assert status == 405 and body["reason"] == "MethodNotAllowed", body
    status, _, body = server.api.get("/api/v1/watch/namespaces/%s/bindings" % ns)
    assert status == 404, body
    status, _, body = server.api.get("/api/v1/watch")
    assert status == 404, body


def test_ruby_kubeclient_watches_through_them(server, ns):
    a = configmap(server, ns, "r", "1")
    rv = a["metadata"]["resourceVersion"]
    configmap(server, ns, "other", "x")  # not this watch's object
    configmap(server, ns, "r", "2")
    configmap(server, ns, "r", "3")
    out = subprocess.run(["ruby", "-e", RUBY_WATCH, server.base_url, server.pki_dir, ns, "r", rv, "2"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["MODIFIED r 2", "MODIFIED r 3"], out.stdout + out.stderr
