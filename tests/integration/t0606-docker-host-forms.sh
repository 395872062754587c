#!/bin/sh
# Docker backend: every other way a create request can reach the host is
# refused before any container exists, judged on the request vigil sends:
# docker.mounts binds (and /proc, /sys, the engine socket's directory),
# security options that unconfine, sysctls, UTS and user namespaces,
# volumes_from, device cgroup rules.  Harmless forms (tmpfs and plain
# volume mounts, a confining security option) run, and with a host-access
# rule the refused forms reach podman as written.
. "$(dirname "$0")/docker-lib.sh"
T=$tmp/task
hint="; allow with a policy rule of category host-access"

refused() {
	name=$1 want=$2
	shift 2
	out=$("$DA" --task-dir "$T" "$@" run -- true)
	check "$name" "$out" "state=DENIED exit=-1 signal=0 reason=host access \
refused: $want$hint"
}

refused "mounts bind" "docker.mounts bind '/etc' at '/e' binds host path '/etc'" \
	--mount type=bind,source=/etc,target=/e,readonly
refused "writable /proc bind" "docker.volumes '/proc:/hp' binds the host's \
/proc writable (kernel and process control)" --volume /proc:/hp
refused "writable /sys mount" "docker.mounts bind '/sys/kernel' at '/k' binds \
the host's /sys/kernel writable (kernel and process control)" \
	--mount type=bind,source=/sys/kernel,target=/k
refused "engine socket directory" "docker.mounts bind '/run' at '/r' reaches \
the container engine socket below '/run' (control of the host)" \
	--mount type=bind,source=/run,target=/r,readonly
refused "socket through a named volume's bind" "docker.mounts bind \
'$tmp/pm/podman.sock' at '/d.sock' mounts a container engine socket (control \
of the host)" --mount "type=bind,source=$tmp/pm/podman.sock,target=/d.sock"
refused "seccomp unconfined" "docker.security_opt 'seccomp=unconfined' turns \
the seccomp filter off" --security-opt seccomp=unconfined
refused "apparmor unconfined" "docker.security_opt 'apparmor=unconfined' turns \
AppArmor confinement off" --security-opt apparmor=unconfined
refused "no-new-privileges false" "docker.security_opt \
'no-new-privileges:false' lets the task gain privileges (setuid programs, \
file capabilities)" --security-opt no-new-privileges:false
refused "label disable" "docker.security_opt 'label=disable' turns SELinux \
separation off" --security-opt label=disable
refused "sysctl" "docker.sysctls 'net.core.somaxconn=1024' sets a kernel \
parameter" --sysctl net.core.somaxconn=1024
refused "uts host" "docker.uts_mode 'host' shares the host's host name (UTS \
namespace)" --uts-mode host
refused "userns host" "docker.userns_mode 'host' shares the host's user \
namespace" --userns-mode host
refused "device cgroup rule" "docker.device_cgroup_rules 'c 1:3 mr' lets the \
container use host devices" --device-cgroup-rule "c 1:3 mr"
api POST "/v1.41/containers/create?name=donor" -H 'Content-Type: application/json' \
	-d '{"Image":"localhost/vigil-test:latest","Cmd":["true"],"HostConfig":{"Binds":["/etc:/hostetc:ro"],"NetworkMode":"none"}}' \
	>/dev/null
refused "volumes_from" "docker.volumes_from 'donor' takes every mount of \
another container" --volumes-from donor
refused "pid host" "docker.pid_mode 'host' shares the host's process \
namespace" --pid-mode host
refused "network host" "docker.network 'host' shares the host's network" \
	--network host
check "no container was created" "$(vigil_containers)" ""

# Harmless forms run.
out=$("$DA" --task-dir "$T" --mount type=tmpfs,target=/t,tmpfs-size=1m \
	--mount type=volume,source=plainv,target=/v \
	--security-opt no-new-privileges:true run -c \
	'echo a >/t/a && echo b >/v/b && cat /t/a /v/b && grep " /t " /proc/mounts | cut -d" " -f3')
check "tmpfs and plain volume mounts run" "$out" \
	"state=SUCCEEDED exit=0 signal=0 reason="
check "tmpfs and volume used" "$(cat "$T/stdout")" "a
b
tmpfs"

# Allowed by a rule, the request reaches podman as written.
out=$("$DA" --task-dir "$T" --allow-host-access --uts-mode host \
	--sysctl net.core.somaxconn=1234 run -c \
	'hostname; cat /proc/sys/net/core/somaxconn')
check "allowed forms run" "$out" "state=SUCCEEDED exit=0 signal=0 reason="
check "UTS namespace and sysctl took effect" "$(cat "$T/stdout")" \
	"$(hostname)
1234"
out=$("$DA" --task-dir "$T" --allow-host-access --volumes-from donor run -- \
	cat /hostetc/hostname)
check "volumes_from reaches the donor's host bind" "$out" \
	"state=SUCCEEDED exit=0 signal=0 reason="
check "host file read through volumes_from" "$(cat "$T/stdout")" \
	"$(cat /etc/hostname)"
exit $fail
