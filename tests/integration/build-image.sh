#!/bin/bash
# Builds the integration tests' stand-in image, as the calling (rootless) user:
#   tests/integration/build-image.sh [IMAGE]     default localhost/gemini-box-test:latest
# The image is /bin/busybox (static) with its applets as symlinks, /etc/passwd and
# /etc/group with node (uid/gid 1000, home /home/node), and the stand-in gemini
# (image/gemini) at /usr/local/bin/gemini; USER node, ENTRYPOINT the stand-in.
# It is made with `podman import` from a rootfs tarball (no registry needed) and
# rebuilt only when absent or when its inputs changed: the image carries the label
# gemini-box-test.inputs=<sha256 of busybox, the stand-in and this script>.
# Env: BUSYBOX (default /bin/busybox), PODMAN (default podman).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
image=${1:-localhost/gemini-box-test:latest}
busybox=${BUSYBOX:-/bin/busybox}
podman=${PODMAN:-podman}
stub=$here/image/gemini
label=gemini-box-test.inputs

die() {
	echo "build-image.sh: $*" >&2
	exit 1
}
[ -x "$busybox" ] || die "$busybox missing (Debian: apt-get install busybox-static)"
[ -r "$stub" ] || die "$stub missing"
# A dynamically linked busybox would need its libraries in the image.
if command -v file >/dev/null 2>&1 && ! file -L "$busybox" | grep -q 'statically linked'; then
	die "$busybox is not statically linked (install busybox-static)"
fi

inputs=$(cat "$busybox" "$stub" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-32)
current=$("$podman" image inspect --format "{{index .Labels \"$label\"}}" "$image" 2>/dev/null || true)
if [ "$current" = "$inputs" ]; then
	echo "build-image.sh: $image is up to date" >&2
	exit 0
fi
old_id=$("$podman" image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/rootfs
mkdir -p "$root"/{bin,etc,dev,proc,sys,run,root,tmp,var/tmp,home/node,usr/local/bin}
chmod 1777 "$root/tmp" "$root/var/tmp"
chmod 700 "$root/root"
cp "$busybox" "$root/bin/busybox"
chmod 755 "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
ln -s bin "$root/sbin"
ln -s ../bin "$root/usr/bin"
ln -s ../bin "$root/usr/sbin"
cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
node:x:1000:1000:node:/home/node:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
node:x:1000:
nogroup:x:65534:
EOF
install -m 755 "$stub" "$root/usr/local/bin/gemini"

# Everything root-owned except node's home; fixed mtimes keep the tarball stable.
tar_opts=(--numeric-owner --mtime=@0 --sort=name)
tar -C "$root" -cf "$tmp/rootfs.tar" "${tar_opts[@]}" --owner=0 --group=0 \
	--exclude=./home/node .
tar -C "$root" -rf "$tmp/rootfs.tar" "${tar_opts[@]}" --owner=1000 --group=1000 ./home/node

"$podman" import --quiet \
	--change 'USER node' \
	--change 'WORKDIR /home/node' \
	--change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
	--change "LABEL $label=$inputs" \
	--change 'ENTRYPOINT ["/usr/local/bin/gemini"]' \
	"$tmp/rootfs.tar" "$image" >/dev/null

new_id=$("$podman" image inspect --format '{{.Id}}' "$image")
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
	"$podman" rmi "$old_id" >/dev/null 2>&1 || true # still used by a box: keep it
fi
# Earlier imports left without a name: remove them (not images built from
# them, which carry the label too, but also io.buildah.version).
"$podman" images --filter dangling=true --filter "label=$label" \
	--format '{{.ID}} {{index .Labels "io.buildah.version"}}' 2>/dev/null |
	while read -r id buildah; do
		[ -z "$buildah" ] && [ "$id" != "${new_id:0:12}" ] && "$podman" rmi "$id" >/dev/null 2>&1
	done
true
echo "build-image.sh: built $image ($inputs)" >&2
