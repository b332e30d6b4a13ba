#!/bin/bash
# Builds an image with the real gemini CLI (from the npm registry) for the rootless
# podman of a user, without any container registry:
#   tests/integration/build-gemini-image.sh USER [IMAGE]     (run as root)
# IMAGE defaults to localhost/gemini-box-real:$GEMINI_CLI_VERSION.
#
# Recipe: debootstrap a minimal Debian (bookworm, from apt's mirror), copy the
# host's Node.js (/usr/bin/node, >= 20; Debian 12's own nodejs is too old) into
# /usr/local/bin, `npm install -g --prefix ROOT/usr/local @google/gemini-cli@VERSION`,
# add user node (uid/gid 1000, home /home/node), tar the tree, then as USER
# `podman import` it with USER node, WORKDIR /home/node, ENTRYPOINT gemini. The image
# does not set SANDBOX: gemini-box sets it per run.
#
# Cached and idempotent: the image carries the label gemini-box-test.recipe=HASH
# (HASH: sha256 of this script and of the host's node version). If USER's image
# already has it, nothing is done. The root filesystem tarball is kept in
# $GEMINI_BOX_TEST_CACHE (default /var/cache/gemini-box-tests) as
# gemini-cli-VERSION-HASH.tar, so a missing image is re-imported from it in
# seconds; only a cold run debootstraps and runs npm (about 1 minute here).
# Network: Debian's apt mirror and the npm registry only.
# Progress goes to stderr ("build-gemini-image: ..."), the tools' own output to
# $GEMINI_BOX_TEST_CACHE/build-gemini-image.log; a failure is one line naming it.
set -euo pipefail

# 0.61.0 exists on the npm registry (checked with `npm view @google/gemini-cli@0.61.0 version`).
GEMINI_CLI_VERSION=0.61.0
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_PACKAGES=libstdc++6,ca-certificates,git,ripgrep,less,procps
HOST_NODE=/usr/bin/node
LABEL=gemini-box-test.recipe
CACHE=${GEMINI_BOX_TEST_CACHE:-/var/cache/gemini-box-tests}
IMAGE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

say() { echo "build-gemini-image: $*" >&2; }
die() {
	say "error: $*"
	exit 1
}

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ -z "$1" ]; then
	die "usage: $0 USER [IMAGE]"
fi
user=$1
image=${2:-localhost/gemini-box-real:$GEMINI_CLI_VERSION}
[ "$(id -u)" = 0 ] || die "must run as root (it runs debootstrap, then podman as $user)"
uid=$(id -u "$user" 2>/dev/null) || die "no such user: $user"
[ "$uid" != 0 ] || die "$user is root; the image is for a rootless podman user"
home=$(getent passwd "$user" | cut -d: -f6)
if [ -z "$home" ] || [ ! -d "$home" ]; then
	die "home directory of $user missing"
fi
command -v podman >/dev/null || die "podman is not installed"
[ -x "$HOST_NODE" ] || die "$HOST_NODE missing (Node.js >= 20 needed)"
node_version=$("$HOST_NODE" --version 2>/dev/null) || die "$HOST_NODE --version failed"
node_major=${node_version#v}
node_major=${node_major%%.*}
[ "$node_major" -ge 20 ] 2>/dev/null || die "$HOST_NODE is $node_version; gemini-cli needs Node.js >= 20"

script=$(realpath -e -- "${BASH_SOURCE[0]}")
hash=$({
	cat -- "$script"
	echo "node $node_version"
} | sha256sum | cut -c1-32)
tarball=$CACHE/gemini-cli-$GEMINI_CLI_VERSION-$hash.tar
log=$CACHE/build-gemini-image.log
start=$SECONDS

# podman as the user, in a clean environment (like tests/integration/run.sh: no
# XDG_RUNTIME_DIR, so rootless podman uses /tmp/podman-run-UID), from / which the
# user can read.
cd /
as_user=(runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user"
	SHELL=/bin/sh PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	LANG=C.UTF-8)
image_recipe() {
	"${as_user[@]}" podman image inspect --format "{{index .Labels \"$LABEL\"}}" "$image" 2>/dev/null || true
}
# step DESCRIPTION TIMEOUT_SECONDS COMMAND...: output to the log; dies on failure.
step() {
	local desc=$1 limit=$2 rc=0
	shift 2
	say "$desc"
	echo "=== $(date '+%F %T') $desc: $*" >>"$log"
	timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1 </dev/null || rc=$?
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		die "$desc: timed out after ${limit}s (see $log)"
	elif [ "$rc" != 0 ]; then
		die "$desc: failed with exit status $rc (see $log)"
	fi
}

if [ "$(image_recipe)" = "$hash" ]; then
	say "$image for $user is up to date (recipe $hash)"
	exit 0
fi

mkdir -p "$CACHE" || die "cannot create $CACHE"
chmod 755 "$CACHE"
exec 9>"$CACHE/.lock" || die "cannot open $CACHE/.lock"
if ! flock -n 9; then
	say "waiting for another build-gemini-image to finish"
	flock -w 900 9 || die "timed out waiting for $CACHE/.lock"
fi
: >"$log"
chmod 644 "$log"

work=
cleanup() {
	rm -f -- "$tarball.tmp"
	[ -n "$work" ] && [ -d "$work" ] || return 0
	# debootstrap mounts proc and sys in the tree; never rm -rf through a mount.
	local m
	for m in $(findmnt -rn -o TARGET | grep -F -- "$work/" | sort -r || true); do
		umount -l "$m" 2>/dev/null || true
	done
	rm -rf --one-file-system -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -s "$tarball" ]; then
	say "using cached root filesystem $tarball"
else
	if ! command -v debootstrap >/dev/null; then
		say "installing debootstrap"
		if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >>"$log" 2>&1 </dev/null; then
			step "apt-get update" 300 apt-get update -q
			step "installing debootstrap" 300 env DEBIAN_FRONTEND=noninteractive \
				apt-get install -y -q debootstrap
		fi
	fi
	command -v npm >/dev/null || die "npm is not installed (comes with Node.js)"
	work=$(mktemp -d "$CACHE/build.XXXXXX")
	root=$work/root
	step "debootstrap $DEBIAN_SUITE (minbase + $DEBIAN_PACKAGES)" 900 \
		debootstrap --variant=minbase --include="$DEBIAN_PACKAGES" \
		"$DEBIAN_SUITE" "$root" "$DEBIAN_MIRROR"
	# Only what the image needs: no package caches, the host's resolver
	# configuration or device nodes (podman provides /dev, resolv.conf, hostname).
	rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
		"$root"/var/cache/apt/*.bin "$root"/var/log/* "$root"/tmp/* 2>/dev/null || true
	: >"$root/etc/resolv.conf"
	echo localhost >"$root/etc/hostname"

	install -D -m 755 "$HOST_NODE" "$root/usr/local/bin/node"
	# --ignore-scripts: the only install scripts (node-pty's node-gyp rebuild,
	# @github/keytar's download) would need more network; both packages ship
	# prebuilt linux-x64 binaries, and npm 11 skips them by default anyway.
	step "npm install -g @google/gemini-cli@$GEMINI_CLI_VERSION" 900 \
		npm install -g --prefix "$root/usr/local" --cache "$CACHE/npm-cache" \
		--ignore-scripts --no-audit --no-fund --no-update-notifier --loglevel=warn \
		"@google/gemini-cli@$GEMINI_CLI_VERSION"
	[ -e "$root/usr/local/bin/gemini" ] || die "npm left no $root/usr/local/bin/gemini (see $log)"
	rm -rf "$root/root/.npm" 2>/dev/null || true
	step "checking node in the tree" 60 chroot "$root" /usr/local/bin/node --version

	# User node, uid/gid 1000 (what gemini-box maps the host user to).
	! grep -qE '^[^:]*:[^:]*:1000:' "$root/etc/passwd" "$root/etc/group" ||
		die "uid or gid 1000 already taken in the debootstrapped tree"
	echo 'node:x:1000:1000:node:/home/node:/bin/bash' >>"$root/etc/passwd"
	echo 'node:x:1000:' >>"$root/etc/group"
	echo 'node:*:19000:0:99999:7:::' >>"$root/etc/shadow"
	[ -e "$root/etc/gshadow" ] && echo 'node:!::' >>"$root/etc/gshadow"
	mkdir -p "$root/home/node"
	cp -a "$root/etc/skel/." "$root/home/node/" 2>/dev/null || true
	chown -R 1000:1000 "$root/home/node"
	chmod 755 "$root/home/node"

	step "making the root filesystem tarball" 300 \
		tar -C "$root" --numeric-owner -cf "$tarball.tmp" \
		--exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' --exclude='./run/*' .
	chmod 644 "$tarball.tmp"
	mv -f "$tarball.tmp" "$tarball"
	# Older recipes' tarballs are of no use any more (about 450 MB each).
	for old in "$CACHE"/gemini-cli-*.tar; do
		[ "$old" = "$tarball" ] || rm -f -- "$old"
	done
	say "removing the debootstrap tree"
	cleanup
	work=
fi

old_id=$("${as_user[@]}" podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
step "importing $image for $user" 600 "${as_user[@]}" podman import --quiet \
	--change 'USER node' \
	--change 'WORKDIR /home/node' \
	--change "ENV PATH=$IMAGE_PATH" \
	--change 'ENV LANG=C.UTF-8' \
	--change "LABEL $LABEL=$hash" \
	--change "LABEL gemini-box-test.gemini-cli=$GEMINI_CLI_VERSION" \
	--change 'ENTRYPOINT ["/usr/local/bin/gemini"]' \
	"$tarball" "$image"
[ "$(image_recipe)" = "$hash" ] || die "$image has no label $LABEL=$hash after the import"
new_id=$("${as_user[@]}" podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
	"${as_user[@]}" podman rmi "$old_id" >/dev/null 2>&1 || true # still used by a box: keep it
fi
say "built $image for $user (gemini-cli $GEMINI_CLI_VERSION, recipe $hash) in $((SECONDS - start))s"
