"""Port of the Variable Expansion [Conformance] test of test/e2e/common/node/expansion.go
(kubernetes/kubernetes) "should allow composing env vars into new env vars".

The pod really runs on one of the session's nodes (conftest.py). Image substitution:
imageutils.BusyBox becomes BUSYBOX_IMAGE (the local busybox image).
"""

from kubernetes import client

from e2e_framework import BUSYBOX_IMAGE, conformance, expect_container_output, new_uuid


def new_container(container_name, command, env_vars, mounts):
    """newContainer"""
    return client.V1Container(name=container_name, image=BUSYBOX_IMAGE, command=command,
                              env=env_vars, volume_mounts=mounts)


def new_pod(command, env_vars, mounts, volumes):
    """newPod"""
    pod_name = "var-expansion-" + new_uuid()
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=pod_name, labels={"name": pod_name}),
        spec=client.V1PodSpec(
            containers=[new_container("dapi-container", command, env_vars, mounts)],
            restart_policy="Never", volumes=volumes))


# Release: v1.9
# Testname: Environment variables, expansion
# Description: Create a Pod with environment variables. Environment variables defined using
# previously defined environment variables MUST expand to proper values.
@conformance("[sig-node] Variable Expansion should allow composing env vars into new env vars "
             "[NodeConformance] [Conformance]")
def test_variable_expansion_composing_env_vars(new_framework):
    # SIGDescribe("Variable Expansion"): NewDefaultFramework("var-expansion"), baseline
    f = new_framework("var-expansion", "baseline")
    env_vars = [
        client.V1EnvVar(name="FOO", value="foo-value"),
        client.V1EnvVar(name="BAR", value="bar-value"),
        client.V1EnvVar(name="FOOBAR", value="$(FOO);;$(BAR)"),
    ]
    pod = new_pod(["sh", "-c", "env"], env_vars, None, None)

    expect_container_output(f, "env composition", pod, 0, [
        "FOO=foo-value",
        "BAR=bar-value",
        "FOOBAR=foo-value;;bar-value",
    ])
