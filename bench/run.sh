#!/bin/bash
# gemini-box's benchmark: each launch path against its podman floor, on the
# same box, with runs interleaved so that machine noise hits both sides alike.
#
#   bench/run.sh BINARY [ROUNDS]
#
# Runs as a user with working rootless podman; as root it runs itself as the
# test user that `make test` prepares (GB_TEST_USER, default gbtest). Needs
# the test image (tests/integration/build-image.sh builds it). Prints one
# table: medians in milliseconds, the ratio to the floor, and the goal.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:?usage: bench/run.sh BINARY [ROUNDS]}")
rounds=${2:-15}

if [ "$(id -u)" -eq 0 ]; then
	user=${GB_TEST_USER:-gbtest}
	id -u "$user" >/dev/null 2>&1 || {
		echo "bench: no user $user; run make test once (as root) to prepare one" >&2
		exit 1
	}
	stage=$(mktemp -d /tmp/gemini-box-bench.XXXXXX)
	cp "$bin" "$stage/"
	cp "$(dirname "$bin")/gemini-box-init" "$here/egress.py" "$stage/"
	cp -R "$here/../tests/integration" "$stage/integration"
	cp "$here/run.sh" "$stage/run.sh"
	chmod -R a+rX "$stage"
	runuser -u "$user" -- env -i HOME="$(getent passwd "$user" | cut -d: -f6)" PATH=/usr/bin:/bin \
		LANG=C.UTF-8 bash "$stage/run.sh" "$stage/gemini-box" "$rounds"
	rc=$?
	rm -rf "$stage"
	exit $rc
fi

image=localhost/gemini-box-test:latest
integration=$here/../tests/integration
[ -d "$integration" ] || integration=$here/integration
bash "$integration/build-image.sh" "$image" >/dev/null 2>&1 || {
	echo "bench: cannot build the test image" >&2
	exit 1
}
work=$(mktemp -d "$HOME/gb-bench.XXXXXX")
export GEMINI_IMAGE=$image XDG_CONFIG_HOME=$work/config
mkdir -p "$XDG_CONFIG_HOME"
[ -e "$HOME/.config/containers" ] && ln -s "$HOME/.config/containers" "$XDG_CONFIG_HOME/containers"
mkdir "$work/p"
cd "$work/p" || exit 1
unset CI GITHUB_ACTIONS

cleanup() {
	podman ps -aq --filter "label=gemini-box-bench=$work" | xargs -r podman rm -f -t 0 >/dev/null 2>&1
	[ -n "${box:-}" ] && podman rm -f -t 0 "$box" >/dev/null 2>&1
	podman rm -f -t 0 gb-bench-floor >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

ms() { # ms COMMAND...: prints the wall time of COMMAND in milliseconds (1 decimal)
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 </dev/null
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 100000)) | sed 's/\(.\)$/.\1/'
}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

"$bin" -p warmup >/dev/null 2>&1 || {
	echo "bench: gemini-box does not run here" >&2
	exit 1
}
box=$(podman ps -q --filter "label=gemini-box.dir=$work/p")
name=$(podman container inspect --format '{{.Name}}' "$box")
rows=()

# 1. Warm: the box runs.
a=() b=()
for ((i = 0; i < rounds; i++)); do
	a+=("$(ms "$bin" -p hi)")
	b+=("$(ms podman exec -i "$name" gemini -p hi)")
done
ma=$(printf '%s\n' "${a[@]}" | median) mb=$(printf '%s\n' "${b[@]}" | median)
rows+=("warm launch|$ma|podman exec|$mb|$(ratio "$ma" "$mb")|<= 1.05")

# 2. Stopped box.
a=() b=()
for ((i = 0; i < rounds; i++)); do
	podman stop -t 2 "$name" >/dev/null
	a+=("$(ms "$bin" -p hi)")
	podman stop -t 2 "$name" >/dev/null
	t0=$(date +%s%N)
	podman start "$name" >/dev/null && podman exec -i "$name" gemini -p hi >/dev/null
	t1=$(date +%s%N)
	b+=("$(echo $(((t1 - t0) / 100000)) | sed 's/\(.\)$/.\1/')")
done
ma=$(printf '%s\n' "${a[@]}" | median) mb=$(printf '%s\n' "${b[@]}" | median)
rows+=("stopped box|$ma|podman start + exec|$mb|$(ratio "$ma" "$mb")|<= 1.10")

# 3. First launch: a project that has had no box yet (its image is here).
a=() b=()
for ((i = 0; i < rounds; i++)); do
	mkdir "$work/first-$i" && cd "$work/first-$i" || exit 1
	a+=("$(ms "$bin" -p hi)")
	podman rm -f -t 0 "$(podman ps -q --filter "label=gemini-box.dir=$work/first-$i")" >/dev/null 2>&1
	cd "$work/p" || exit 1
	podman rm -f -t 0 gb-bench-floor >/dev/null 2>&1
	t0=$(date +%s%N)
	podman run -d --name gb-bench-floor --userns=keep-id:uid=1000,gid=1000 --init \
		--entrypoint sleep "$image" infinity >/dev/null &&
		podman exec -i gb-bench-floor gemini -p hi >/dev/null
	t1=$(date +%s%N)
	b+=("$(echo $(((t1 - t0) / 100000)) | sed 's/\(.\)$/.\1/')")
done
podman rm -f -t 0 gb-bench-floor >/dev/null 2>&1
ma=$(printf '%s\n' "${a[@]}" | median) mb=$(printf '%s\n' "${b[@]}" | median)
rows+=("first launch|$ma|podman run -d + exec|$mb|$(ratio "$ma" "$mb")|<= 1.15")

# 4. gemini-box's own cost: a stub podman that answers at once, in a directory
# with no box record, so a run asks it twice (inspect, exec); the floor is the
# stub run twice.
mkdir "$work/s" && cd "$work/s" || exit 1
stub=$work/podman-stub
cat >"$stub" <<STUB
#!/bin/sh
case "\$1 \$2" in
"container inspect") printf '[{"Id":"x","State":{"Status":"running"},"Config":{"Labels":{"gemini-box.dir":"%s"}}}]' "$work/s" ;;
esac
exit 0
STUB
chmod 755 "$stub"
a=() b=() mem=()
for ((i = 0; i < rounds * 2; i++)); do
	a+=("$(GEMINI_BOX_PODMAN=$stub ms "$bin" -p hi)")
	t0=$(date +%s%N)
	"$stub" container inspect x >/dev/null
	"$stub" exec x >/dev/null
	t1=$(date +%s%N)
	b+=("$(echo $(((t1 - t0) / 100000)) | sed 's/\(.\)$/.\1/')")
done
for ((i = 0; i < 5; i++)); do
	mem+=("$(GEMINI_BOX_PODMAN=$stub /usr/bin/time -f %M "$bin" -p hi 2>&1 >/dev/null | tail -n 1)")
done
ma=$(printf '%s\n' "${a[@]}" | median) mb=$(printf '%s\n' "${b[@]}" | median)
own=$(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.1f", a - b}')
rss=$(printf '%s\n' "${mem[@]}" | median)
rows+=("own cost (stub podman)|$ma|stub alone|$mb|+$own ms|<= 2 ms")
rows+=("peak memory (KiB)|$rss|||$(awk -v k="$rss" 'BEGIN {printf "%.1f MB", k / 1024}')|<= 4 MB")
cd "$work/p" || exit 1

# 5. --box-list with 200 boxes: made directly with podman, labelled as boxes.
for ((i = 0; i < 200; i++)); do
	podman create --label "gemini-box.dir=$work/gone-$i" --label "gemini-box-bench=$work" \
		--label gemini-box.image=x --entrypoint sleep "$image" 1 >/dev/null
done
a=() b=()
for ((i = 0; i < rounds; i++)); do
	a+=("$(ms "$bin" --box-list)")
	b+=("$(ms podman ps -a --format json)")
done
ma=$(printf '%s\n' "${a[@]}" | median) mb=$(printf '%s\n' "${b[@]}" | median)
rows+=("--box-list, 200 boxes|$ma|podman ps -a --format json|$mb|$(ratio "$ma" "$mb")|<= 1.2")

# 6. The allowlist mode: bytes and connections through the init's hand-over
# and the host's proxy, against the same transfers made directly.
egress_rows=$(python3 "$here/egress.py" "$bin" "$(dirname "$bin")/gemini-box-init" 1024 200 5) || {
	echo "bench: the egress benchmark failed" >&2
	exit 1
}

echo "gemini-box benchmark: $rounds interleaved rounds, medians in ms ($(nproc) cores, $(podman info --format '{{.Store.GraphDriverName}}/{{.Host.OCIRuntime.Name}}'))"
echo
echo "| path | gemini-box | floor | floor ms | ratio | goal |"
echo "| --- | ---: | --- | ---: | ---: | --- |"
for r in "${rows[@]}"; do
	IFS='|' read -r what mine floor fms rat goal <<<"$r"
	echo "| $what | $mine | $floor | $fms | $rat | $goal |"
done
printf '%s\n' "$egress_rows"
