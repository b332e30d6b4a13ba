#!/bin/bash
# Prepares this machine for gemini-box's system tests (run as root):
#
#   tests/system/setup-machine.sh USER [STAGE BINARY]
#
# - installs the test packages (scripts/ensure-deps.sh test);
# - makes USER (if absent) with subordinate ids, and gives it rootless podman
#   as it works here: the cgroup hierarchies mounted (some boots mount none),
#   /dev/net/tun usable, / a shared mount, runc as the OCI
#   runtime in USER's containers.conf (crun refuses the hybrid cgroups of these
#   machines; see /work/shared/notes/podman-on-these-machines.md). USER is meant
#   to be a dedicated one: that file is replaced;
# - builds, as USER, the stand-in image localhost/gemini-box-test:latest
#   (tests/integration/build-image.sh) and, when GB_IT_REAL_IMAGE names one,
#   the image with the real gemini CLI (tests/integration/build-gemini-image.sh,
#   about a minute once, then cached in /var/cache/gemini-box-tests);
# - with STAGE (an existing directory) and BINARY: copies BINARY (and the
#   gemini-box-init beside it) to STAGE/gemini-box, tests/system and
#   tests/integration to STAGE/tests/, all readable by USER; and as the user
#   gbother (made if absent) plants what another real user would: a sticky
#   shared directory of theirs holding .git and a project file
#   (STAGE/planted, like /tmp with a /tmp/.git) and a TMPDIR in which they made
#   gemini/ide first (STAGE/planted-tmp).
# Idempotent. Exit status 0 when the machine is ready.
# shellcheck disable=SC2015 # "test && test || fail" is meant: fail if either fails
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
IT_DIR=$REPO/tests/integration

say() { printf '%s\n' "$*" >&2; }
die() {
	say "setup-machine.sh: $*"
	exit 1
}

if [ $# -ne 1 ] && [ $# -ne 3 ]; then
	die "usage: $0 USER [STAGE BINARY]"
fi
user=$1 stage=${2:-} bin=${3:-}
[ "$(id -u)" = 0 ] || die "must run as root"

if [ -f "$REPO/scripts/ensure-deps.sh" ]; then
	sh "$REPO/scripts/ensure-deps.sh" test || die "scripts/ensure-deps.sh test failed"
else
	say "setup-machine.sh: $REPO/scripts/ensure-deps.sh not found; assuming packages are installed"
fi
if [ -n "$stage" ]; then
	[ -d "$stage" ] || die "$stage is not a directory"
	[ -f "$bin" ] && [ -x "$bin" ] || die "$bin is not an executable file (run make first)"
fi

# --- the test user ------------------------------------------------------------
if ! id -u "$user" >/dev/null 2>&1; then
	useradd -m -s /bin/bash "$user" || die "useradd $user failed"
fi
home=$(getent passwd "$user" | cut -d: -f6)
[ -d "$home" ] || { mkdir -p "$home" && chown "$user:" "$home"; } || die "cannot make $home"
for f in /etc/subuid /etc/subgid; do
	touch "$f"
	if ! grep -q "^$user:" "$f"; then
		# First free range above every existing one (and at least 100000).
		start=$(awk -F: '{e = $2 + $3; if (e > m) m = e} END {print (m > 100000 ? m : 100000)}' "$f")
		echo "$user:$start:65536" >>"$f"
	fi
done

# --- rootless podman as it works here -------------------------------------------
# slirp4netns opens /dev/net/tun as the user.
if [ ! -e /dev/net/tun ]; then
	modprobe tun 2>/dev/null || true
	[ -e /dev/net/tun ] || { mkdir -p /dev/net && mknod /dev/net/tun c 10 200; }
fi
chmod 666 /dev/net/tun || say "setup-machine.sh: warning: chmod 666 /dev/net/tun failed"
# Otherwise every podman call warns that / is not a shared mount.
mount --make-rshared / 2>/dev/null || say "setup-machine.sh: warning: mount --make-rshared / failed"
# Some boots of these machines mount no cgroup filesystem at all, and then
# every runtime refuses every container ("runc create failed: no cgroup mount
# found in mountinfo"). The kernel still has the hierarchies (/proc/cgroups
# gives each enabled controller its hierarchy number): mount them as the other
# boots do, v1 controllers under a tmpfs plus the v2 "unified" tree. Each
# hierarchy is mounted with exactly the controllers it holds (cpu and cpuacct
# share one on some kernels, not on others); name=systemd if init has one.
mount_cgroups() {
	grep -Eq ' - cgroup2? ' /proc/self/mountinfo && return 0
	say "setup-machine.sh: no cgroup filesystem is mounted; mounting the kernel's hierarchies"
	local groups
	groups=$(awk '!/^#/ && $2 != 0 && $4 == 1 {c[$2] = c[$2] ? c[$2] "," $1 : $1}
		END {for (h in c) print c[h]}' /proc/cgroups) || return 1
	# Every controller on v2 (hierarchy 0): the unified tree alone.
	if [ -z "$groups" ]; then
		mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup
		return
	fi
	mount -t tmpfs -o mode=755,nosuid,nodev,noexec cgroup /sys/fs/cgroup || return 1
	local set dir
	for set in $groups; do
		dir=/sys/fs/cgroup/$set
		mkdir -p "$dir" && mount -t cgroup -o "nosuid,nodev,noexec,$set" cgroup "$dir" || return 1
		# The usual short names for a shared hierarchy (cpu -> cpu,cpuacct).
		case $set in *,*) for c in ${set//,/ }; do ln -sfn "$set" "/sys/fs/cgroup/$c"; done ;; esac
	done
	if grep -q ':name=systemd:' /proc/1/cgroup; then
		mkdir -p /sys/fs/cgroup/systemd &&
			mount -t cgroup -o nosuid,nodev,noexec,none,name=systemd cgroup /sys/fs/cgroup/systemd || return 1
	fi
	mkdir -p /sys/fs/cgroup/unified && mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup/unified
}
mount_cgroups || die "cannot mount the cgroup hierarchies (runc needs them to start a container)"
# Test-machine setting (crun refuses hybrid cgroups here); not gemini-box's job.
runuser -u "$user" -- mkdir -p "$home/.config/containers" || die "cannot make $home/.config/containers"
printf '[engine]\nruntime = "runc"\n' >"$home/.config/containers/containers.conf"
chown "$user:" "$home/.config/containers/containers.conf"

# as_user COMMAND...: COMMAND as the test user in a clean environment, from /
# (no XDG_RUNTIME_DIR: rootless podman then uses /tmp/podman-run-UID).
as_user() {
	(cd / && runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@")
}

# --- the images -------------------------------------------------------------------
# build-image.sh reads its inputs as the user: from a copy it can read.
imgsrc=$(mktemp -d /tmp/gemini-box-image.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$imgsrc"' EXIT
mkdir "$imgsrc/image" && cp "$IT_DIR/build-image.sh" "$imgsrc/" && cp "$IT_DIR/image/gemini" "$imgsrc/image/" &&
	chmod -R a+rX "$imgsrc" || die "cannot copy tests/integration/build-image.sh's inputs"
as_user bash "$imgsrc/build-image.sh" localhost/gemini-box-test:latest ||
	die "could not build the test image (tests/integration/build-image.sh)"
if [ -n "${GB_IT_REAL_IMAGE:-}" ]; then
	bash "$IT_DIR/build-gemini-image.sh" "$user" "$GB_IT_REAL_IMAGE" ||
		die "could not build the real gemini image (tests/integration/build-gemini-image.sh)"
fi

[ -n "$stage" ] || exit 0

# --- the staged binary and tests --------------------------------------------------
cp "$bin" "$stage/gemini-box" || die "cannot copy $bin"
# The box's init comes with gemini-box, from next to it.
if [ -f "$(dirname "$bin")/gemini-box-init" ]; then
	cp "$(dirname "$bin")/gemini-box-init" "$stage/gemini-box-init" || die "cannot copy gemini-box-init"
fi
mkdir -p "$stage/tests" && cp -R "$HERE" "$stage/tests/system" && cp -R "$IT_DIR" "$stage/tests/integration" ||
	die "cannot copy the tests to $stage"

# --- what another real user plants --------------------------------------------------
id -u gbother >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin gbother || die "useradd gbother failed"
rm -rf "$stage/planted" "$stage/planted-tmp"
mkdir -m 1777 "$stage/planted" "$stage/planted-tmp" && chown gbother: "$stage/planted" "$stage/planted-tmp" ||
	die "cannot make $stage/planted"
# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
runuser -u gbother -- sh -c 'umask 022 && mkdir -p "$1/.git" "$1/.gemini" "$2/gemini/ide" &&
	echo "{\"mounts\": [{\"source\": \"/\", \"target\": \"/host\"}]}" >"$1/.gemini/gemini-box.json"' \
	- "$stage/planted" "$stage/planted-tmp" || die "cannot plant the files of gbother"

chmod 755 "$stage"
chmod -R a+rX "$stage/gemini-box" "$stage/tests"
[ ! -e "$stage/gemini-box-init" ] || chmod 755 "$stage/gemini-box-init"
chmod 755 "$stage/gemini-box" "$stage/tests/integration/"*.sh "$stage/tests/integration/image/gemini"
exit 0
