"""Ports of the Downward API [Conformance] tests of test/e2e/common/node/downwardapi.go
(kubernetes/kubernetes) "should provide pod name, namespace and IP address as env vars" and
"should provide default limits.cpu/memory from node allocatable".

The pods really run on the session's nodes (conftest.py). Image substitution:
imageutils.BusyBox becomes BUSYBOX_IMAGE (the local busybox image).
"""

from kubernetes import client

from e2e_framework import (BUSYBOX_IMAGE, REGEX_IPV4, REGEX_IPV6, conformance,
                           expect_container_output, match_regexp, new_uuid)


def downward_api_framework(new_framework):
    """SIGDescribe("Downward API"): NewDefaultFramework("downward-api"), privileged."""
    return new_framework("downward-api", "privileged")


def field_ref_env(name, field_path):
    return client.V1EnvVar(name=name, value_from=client.V1EnvVarSource(
        field_ref=client.V1ObjectFieldSelector(api_version="v1", field_path=field_path)))


def resource_field_ref_env(name, resource):
    return client.V1EnvVar(name=name, value_from=client.V1EnvVarSource(
        resource_field_ref=client.V1ResourceFieldSelector(resource=resource)))


def downward_api_using_pod(f, pod, env, expectations):
    """testDownwardAPIUsingPod: e2epodoutput.TestContainerOutputRegexp."""
    expect_container_output(f, "downward api env vars", pod, 0, expectations,
                            matcher=match_regexp)


def downward_api(f, pod_name, env, expectations):
    """testDownwardAPI: busybox `env` with requests 250m/32Mi and limits 1250m/64Mi."""
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name=pod_name, labels={"name": pod_name}),
        spec=client.V1PodSpec(
            containers=[client.V1Container(
                name="dapi-container", image=BUSYBOX_IMAGE, command=["sh", "-c", "env"],
                resources=client.V1ResourceRequirements(
                    requests={"cpu": "250m", "memory": "32Mi"},
                    limits={"cpu": "1250m", "memory": "64Mi"}),
                env=env)],
            restart_policy="Never"))
    downward_api_using_pod(f, pod, env, expectations)


# Release: v1.9
# Testname: DownwardAPI, environment for name, namespace and ip
# Description: Downward API MUST expose Pod and Container fields as environment variables.
# Specify Pod Name, namespace and IP as environment variable in the Pod Spec are visible at
# runtime in the container.
@conformance("[sig-node] Downward API should provide pod name, namespace and IP address as env "
             "vars [NodeConformance] [Conformance]")
def test_downward_api_pod_name_namespace_ip(new_framework):
    f = downward_api_framework(new_framework)
    pod_name = "downward-api-" + new_uuid()
    env = [
        field_ref_env("POD_NAME", "metadata.name"),
        field_ref_env("POD_NAMESPACE", "metadata.namespace"),
        field_ref_env("POD_IP", "status.podIP"),
    ]
    expectations = [
        "POD_NAME=%s" % pod_name,
        "POD_NAMESPACE=%s" % f.namespace.metadata.name,
        "POD_IP=%s|%s" % (REGEX_IPV4, REGEX_IPV6),
    ]
    downward_api(f, pod_name, env, expectations)


# Release: v1.9
# Testname: DownwardAPI, environment for default CPU and memory limits and requests
# Description: Downward API MUST expose CPU request and Memory limits set through environment
# variables at runtime in the container.
@conformance("[sig-node] Downward API should provide default limits.cpu/memory from node "
             "allocatable [NodeConformance] [Conformance]")
def test_downward_api_default_limits_from_node_allocatable(new_framework):
    f = downward_api_framework(new_framework)
    pod_name = "downward-api-" + new_uuid()
    env = [
        resource_field_ref_env("CPU_LIMIT", "limits.cpu"),
        resource_field_ref_env("MEMORY_LIMIT", "limits.memory"),
    ]
    expectations = [
        "CPU_LIMIT=[1-9]",
        "MEMORY_LIMIT=[1-9]",
    ]
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name=pod_name, labels={"name": pod_name}),
        spec=client.V1PodSpec(
            containers=[client.V1Container(name="dapi-container", image=BUSYBOX_IMAGE,
                                           command=["sh", "-c", "env"], env=env)],
            restart_policy="Never"))
    downward_api_using_pod(f, pod, env, expectations)
