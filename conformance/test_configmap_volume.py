"""Port of the ConfigMap volume [Conformance] test of
test/e2e/common/storage/configmap_volume.go (kubernetes/kubernetes) "should be consumable from
pods in volume".

The pod really runs on one of the session's nodes (conftest.py). Image substitution: agnhost's
`mounttest` subcommand runs in AGNHOST_IMAGE (agnhost-lite, whose /agnhost mounttest prints
`content of file "<path>": <content>` and `mode of file "<path>": <os.FileMode>` as agnhost's
does, kubelet-lite/images/build-images.sh).
"""

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (by, conformance, describe_error, expect_container_output, fail,
                           match_regexp, new_agnhost_pod, new_uuid)


def go_file_mode(mode):
    """os.FileMode(mode).String() for permission bits (a regular file)."""
    out = "-"
    for i, c in enumerate("rwxrwxrwx"):
        out += c if mode & (1 << (8 - i)) else "-"
    return out


def get_file_mode_regex(file_path, mask):
    """getFileModeRegex: the mounttest output line for the file's mode (0644 on Linux, 0775 on
    Windows when mask is None)."""
    if mask is None:
        linux_mask, windows_mask = 0o644, 0o775
    else:
        linux_mask = windows_mask = mask
    linux_output = 'mode of file "%s": %s' % (file_path, go_file_mode(linux_mask))
    windows_output = 'mode of Windows file "%s": %s' % (file_path, go_file_mode(windows_mask))
    return "(%s|%s)" % (linux_output, windows_output)


def create_mounts(volume_name, volume_mount_path, read_only):
    """createMounts"""
    return [client.V1VolumeMount(name=volume_name, mount_path=volume_mount_path,
                                 read_only=read_only)]


def new_config_map(f, name):
    """newConfigMap"""
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(namespace=f.namespace.metadata.name, name=name),
        data={"data-1": "value-1", "data-2": "value-2", "data-3": "value-3"})


def create_config_map_volume_mounttest_pod(namespace, volume_name, reference_name, mount_path,
                                           *mounttest_args):
    """createConfigMapVolumeMounttestPod"""
    volumes = [client.V1Volume(
        name=volume_name,
        config_map=client.V1ConfigMapVolumeSource(name=reference_name))]
    pod_name = "pod-configmaps-" + new_uuid()
    pod = new_agnhost_pod(namespace, pod_name, volumes,
                          create_mounts(volume_name, mount_path, True), None,
                          "mounttest", *mounttest_args)
    pod.spec.restart_policy = "Never"
    return pod


def set_pod_non_root_user(pod):
    """setPodNonRootUser (Linux): RunAsUser 1000."""
    pod.spec.security_context.run_as_user = 1000


def do_config_map_e2e_without_mappings(f, as_user, fs_group, default_mode):
    """doConfigMapE2EWithoutMappings"""
    group_id = fs_group
    name = "configmap-test-volume-" + new_uuid()
    volume_name = "configmap-volume"
    volume_mount_path = "/etc/configmap-volume"
    config_map = new_config_map(f, name)

    by("Creating configMap with name %s" % config_map.metadata.name)
    try:
        config_map = f.core.create_namespaced_config_map(f.namespace.metadata.name, config_map)
    except ApiException as err:
        fail("unable to create test configMap %s: %s", config_map.metadata.name,
             describe_error(err))

    pod = create_config_map_volume_mounttest_pod(
        f.namespace.metadata.name, volume_name, name, volume_mount_path,
        "--file_content=/etc/configmap-volume/data-1",
        "--file_mode=/etc/configmap-volume/data-1")
    pod.spec.termination_grace_period_seconds = 1

    if as_user:
        set_pod_non_root_user(pod)
    if group_id != 0:
        pod.spec.security_context.fs_group = group_id
    if default_mode is not None:
        pod.spec.volumes[0].config_map.default_mode = default_mode

    file_mode_regexp = get_file_mode_regex("/etc/configmap-volume/data-1", default_mode)
    output = [
        'content of file "/etc/configmap-volume/data-1": value-1',
        file_mode_regexp,
    ]
    expect_container_output(f, "consume configMaps", pod, 0, output, matcher=match_regexp)


# Release: v1.9
# Testname: ConfigMap Volume, without mapping
# Description: Create a ConfigMap, create a Pod that mounts a volume and populates the volume
# with data stored in the ConfigMap. The ConfigMap that is created MUST be accessible to read
# from the newly created Pod using the volume mount. The data content of the file MUST be
# readable and verified and file modes MUST default to 0x644.
@conformance("[sig-storage] ConfigMap should be consumable from pods in volume "
             "[NodeConformance] [Conformance]")
def test_configmap_volume_consumable(new_framework):
    # SIGDescribe("ConfigMap"): NewDefaultFramework("configmap"), baseline
    f = new_framework("configmap", "baseline")
    do_config_map_e2e_without_mappings(f, False, 0, None)

