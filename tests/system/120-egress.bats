#!/usr/bin/env bats
#
# The allowlist network mode, on real rootless podman: the box's only way out
# is its init's relay to the host's egress proxy. Servers on the host's
# loopback stand in for the internet, each listed by its address (the only
# way a loopback address is ever reached through the proxy). The attackers:
#   the agent: any process in the box, trying to send data somewhere else
#     (an unlisted host, a raw connection, DNS, the host's own services) or to
#     edit the record of what it did;
#   the repository: a project file widening the list.

# shellcheck disable=SC2015 # "test && test || fail" is meant
# shellcheck disable=SC2317,SC2030,SC2031 # bats: each @test is a function of its own process

load helpers

# start_origin NAME: a stand-in server on 127.0.0.1; sets NAME_PORT and
# NAME_LOG (one line per request it received).
start_origin() {
	local name=$1 i
	: >"$T/$name.log"
	python3 "$IT_DIR/origin-server.py" "$name" "$T/$name.log" "$T/$name.port" 3>/dev/null &
	defer "kill $! 2>/dev/null"
	for i in $(seq 1 100); do
		[ -s "$T/$name.port" ] && break
		sleep 0.05
	done
	[ -s "$T/$name.port" ] || fail "the stand-in server $name did not start"
	printf -v "${name}_PORT" '%s' "$(cat "$T/$name.port")"
	printf -v "${name}_LOG" '%s' "$T/$name.log"
}

# state_of: the box's state directory (from its label).
state_of() {
	inspect '{{index .Config.Labels "gemini-box.state"}}'
}

# proxy_pid STATE: the pid of the egress proxy serving STATE, if any.
proxy_pid() {
	pgrep -u "$(id -u)" -f -- "--box-egress-proxy $1\$" | head -n 1
}

# The agent sends data only to listed hosts, and only through the proxy: a
# listed server is reached (plain HTTP and a CONNECT tunnel); an unlisted one,
# the IDE-companion-like server on the host's loopback, a direct TCP
# connection and a DNS lookup are not; each refusal is a 403 with its reason,
# in the log and in --box-egress.
@test "allowlist_box_reaches_only_listed_hosts" {
	start_origin allowed
	start_origin other
	start_companion
	own_config "{\"network\": \"allowlist\", \"egress\": [\"127.0.0.1:$allowed_PORT\"]}"
	run_gb 0 -p "get:127.0.0.1:$allowed_PORT/plain" "connect:127.0.0.1:$allowed_PORT" \
		"get:127.0.0.1:$other_PORT/leak" "connect:127.0.0.1:$other_PORT" \
		"connect:127.0.0.1:$IDE_PORT" "tcp:127.0.0.1:$allowed_PORT" "tcp:10.0.2.2:$allowed_PORT" \
		dns:example.com
	expect_report
	box_of .
	# every client in the box is pointed at the box's own end of the relay
	expect_env HTTPS_PROXY http://127.0.0.1:3128
	expect_env HTTP_PROXY http://127.0.0.1:3128
	expect_env no_proxy localhost,127.0.0.1,::1
	local reply
	reply=$(rget get.reply) || fail "no get reply"
	[[ $reply == *"origin allowed /plain"* ]] || fail "plain HTTP to a listed host did not arrive: $reply"
	reply=$(grep '^connect.reply=' "$T/out" | head -n 1)
	[[ $reply == *"200 Connection established"*"origin allowed /"* ]] ||
		fail "a CONNECT tunnel to a listed host did not work: $reply"
	grep -qx 'GET /plain' "$allowed_LOG" || fail "the listed server saw no request"
	# refused, with the reason, and nothing reached the unlisted servers
	[ "$(grep -c '^get.reply=HTTP/1.1 403 Forbidden' "$T/out")" -eq 1 ] || fail "no 403 for the unlisted GET"
	[ "$(grep '^connect.reply=' "$T/out" | grep -c 'HTTP/1.1 403 Forbidden.*not in this box')" -eq 2 ] ||
		fail "no 403 for each unlisted CONNECT"
	[ ! -s "$other_LOG" ] || fail "an unlisted server was reached: $(cat "$other_LOG")"
	[ ! -s "$IDE_LOG" ] || fail "the host's loopback service was reached: $(cat "$IDE_LOG")"
	# no way around the proxy: no interface but loopback, no DNS
	[ "$(grep -c '^tcp=failed$' "$T/out")" -eq 2 ] || fail "a direct TCP connection succeeded"
	grep -qx 'dns=failed' "$T/out" || fail "a DNS lookup succeeded"
	agent_sh 'ls /sys/class/net' >"$T/ifaces"
	expect_eq "$(cat "$T/ifaces")" lo "the box's network interfaces"
	# the record, outside the box
	local log
	log=$(state_of)/egress.log
	grep -q "	allow	GET	127.0.0.1:$allowed_PORT	127.0.0.1	[0-9]*	[0-9]*	listed\$" "$log" ||
		fail "no allow line for the listed GET: $(cat "$log")"
	grep -q "	allow	CONNECT	127.0.0.1:$allowed_PORT	" "$log" || fail "no allow line for the CONNECT"
	grep -q "	deny	GET	127.0.0.1:$other_PORT	" "$log" || fail "no deny line for the unlisted GET"
	grep -q "	deny	CONNECT	127.0.0.1:$IDE_PORT	" "$log" || fail "no deny line for the companion's port"
	run_gb 0 --box-egress
	grep -q "deny .*GET .*127.0.0.1:$other_PORT  not in this box's egress list" "$T/out" ||
		fail "--box-egress does not list the unlisted GET"
	grep -q "deny .*CONNECT .*127.0.0.1:$IDE_PORT " "$T/out" || fail "--box-egress does not list the companion's port"
	grep -q "127.0.0.1:$allowed_PORT" "$T/out" && fail "--box-egress lists an allowed connection"
	grep -q '^3 refused or failed in all' "$T/out" || fail "--box-egress's count is not 3"
	return 0
}

# A name that resolves to an internal address is no way to the host's own
# services (DNS rebinding, a "localhost" entry): only the address itself,
# listed as such, is reached.
@test "listed_names_resolving_inside_are_refused" {
	start_origin inner
	own_config "{\"network\": \"allowlist\", \"egress\": [\"localhost:$inner_PORT\"]}"
	run_gb 0 -p "connect:localhost:$inner_PORT" "get:localhost:$inner_PORT/x"
	expect_report
	[ "$(grep -c 'HTTP/1.1 403 Forbidden.*resolves to .*an internal address' "$T/out")" -eq 2 ] ||
		fail "a listed name resolving to loopback was not refused"
	[ ! -s "$inner_LOG" ] || fail "the loopback server was reached through a name: $(cat "$inner_LOG")"
}

# The agent cannot edit the log nor the list: neither is in the box; the
# socket's directory is read-only; a hostile request is refused and logged.
@test "agent_cannot_touch_the_egress_record" {
	start_origin allowed
	own_config "{\"network\": \"allowlist\", \"egress\": [\"127.0.0.1:$allowed_PORT\"]}"
	run_gb 0 -p hi
	box_of .
	local state
	state=$(state_of)
	[ -s "$state/egress.allow" ] || fail "no allow file (test broken?)"
	agent_sh "test -e '$state/egress.log' || test -e '$state/egress.allow'" &&
		fail "the box sees the log or the list"
	agent_sh 'ls /run/gemini-box/egress' >"$T/ls"
	expect_eq "$(cat "$T/ls")" proxy.sock "what the box sees of the proxy's directory"
	agent_sh 'touch /run/gemini-box/egress/x' 2>/dev/null && fail "the box can write the proxy's directory"
	agent_sh 'rm -f /run/gemini-box/egress/proxy.sock' 2>/dev/null || true
	[ -S "$state/egress/proxy.sock" ] || fail "the box removed the proxy's socket"
	# a request that is no proxy request at all, straight at the relay
	agent_sh "printf 'GET /etc/passwd HTTP/1.1\r\n\r\n' | timeout 5 nc 127.0.0.1 3128" >"$T/bad" || true
	grep -q '^HTTP/1.1 400 ' "$T/bad" || fail "a malformed request was not refused: $(cat "$T/bad")"
	grep -q '	deny	-	-:0	-	0	0	only CONNECT and http:// URIs' "$state/egress.log" ||
		fail "the malformed request is not in the log: $(cat "$state/egress.log")"
	[ "$(stat -c %a "$state/egress.log")" = 600 ] || fail "the log is not private"
	# a head whose host forges log lines (a newline, tabs) and drives the
	# terminal (an escape): refused, and none of its words in the log
	agent_sh "printf 'CONNECT [a\\n2026-11-29T22:00:00Z\\tallow\\tCONNECT\\tforged.example:443\\t1.2.3.4\\t9\\t9\\tlisted\\n\\033[2J]:1 HTTP/1.1\\r\\n\\r\\n' | timeout 5 nc 127.0.0.1 3128" >"$T/forge" || true
	grep -q '^HTTP/1.1 400 ' "$T/forge" || fail "the forging head was not refused: $(cat "$T/forge")"
	grep -q forged "$state/egress.log" && fail "a line was forged in the log: $(cat "$state/egress.log")"
	grep -q $'\e' "$state/egress.log" && fail "an escape sequence reached the log"
	run_gb 0 --box-egress
	grep -q $'\e' "$T/out" && fail "an escape sequence reached --box-egress's output"
	return 0
}

# The agent cannot hold the host's processes: the proxy serves a box 96
# connections at once and takes no more until one ends (the box's init then
# answers 503 itself), whatever the box opens.
@test "agent_cannot_exhaust_host_processes" {
	start_origin allowed
	own_config "{\"network\": \"allowlist\", \"egress\": [\"127.0.0.1:$allowed_PORT\"]}"
	run_gb 0 -p hi
	box_of .
	local state pid
	state=$(state_of)
	pid=$(proxy_pid "$state")
	[ -n "$pid" ] || fail "no egress proxy"
	# 130 connections that send nothing, each held open from inside the box
	agent_sh 'for i in $(seq 130); do (sleep 60 | nc 127.0.0.1 3128 >/dev/null 2>&1 &); done; sleep 2
		printf "CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n" | timeout 40 nc 127.0.0.1 3128' >"$T/flood" || true
	grep -q '^HTTP/1.1 503 ' "$T/flood" || fail "connection 131 was not refused: $(cat "$T/flood")"
	local n
	n=$(pgrep -P "$pid" | wc -l)
	echo "  the proxy's connection processes: $n"
	[ "$n" -le 96 ] || fail "the proxy holds $n processes on the host for one box"
	[ "$n" -ge 80 ] || fail "only $n connections reached the proxy (test broken?)"
	agent_sh 'pkill sleep' || true
}

# The agent cannot give the host's proxy a descriptor of its own (one whose
# options it shares, or whose close blocks for ever, SO_LINGER): only the
# box's init may hand one over, and the init cannot be traced or robbed of
# its descriptors. A real sendmsg with SCM_RIGHTS, from a real program.
@test "agent_cannot_hand_the_proxy_a_descriptor" {
	cat >"$T/hand.c" <<'EOC'
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
int main(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "/run/gemini-box/egress/proxy.sock" };
	int s = socket(AF_UNIX, SOCK_STREAM, 0), pair[2];
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, pair) < 0) {
		printf("hand=cannot-connect\n");
		return 1;
	}
	struct linger lg = { 1, 1000000 };
	setsockopt(pair[0], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	char m = 'F';
	struct iovec iov = { &m, 1 };
	union { char b[CMSG_SPACE(sizeof(int))]; struct cmsghdr a; } c;
	memset(&c, 0, sizeof(c));
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.b, .msg_controllen = sizeof(c.b) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &pair[0], sizeof(int));
	if (sendmsg(s, &msg, MSG_NOSIGNAL) < 0)
		printf("hand=refused:%s\n", strerror(errno));
	else
		printf("hand=taken\n");
	return 0;
}
EOC
	gcc -static -O1 -o hand "$T/hand.c" || fail "cannot build the test program"
	cat >"$T/probe.c" <<'EOC'
#include <sys/socket.h>
int main(void)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0), off = 0;
	return setsockopt(s, SOL_SOCKET, 83 /* SO_PASSRIGHTS */, &off, sizeof(off)) == 0 ? 0 : 1;
}
EOC
	gcc -o "$T/probe" "$T/probe.c" || fail "cannot build the probe"
	"$T/probe" || skip "this kernel (before 6.16) has no SO_PASSRIGHTS"
	own_config '{"network": "allowlist"}'
	run_gb 0 -p hi
	box_of .
	agent_sh ./hand >"$T/hand" || true
	grep -q '^hand=refused:Operation not permitted$' "$T/hand" ||
		fail "the proxy took a descriptor from the agent: $(cat "$T/hand")"
	# the init: no tracing it, no taking its descriptors
	agent_sh 'ls /proc/1/fd' >/dev/null 2>&1 && fail "the agent can see the init's descriptors"
	# and the way through the init still works
	run_gb 0 -p connect:127.0.0.1:1
	grep -q '^connect.reply=HTTP/1.1 403 ' "$T/out" || fail "the init's hand-over no longer works"
	return 0
}

# The egress state gemini-box relies on, spoiled: each failure is one line
# saying what to do, never a box without its way out that says nothing.
@test "egress_state_refusals_say_what_to_do" {
	own_config '{"network": "allowlist"}'
	run_gb 0 -p hi
	box_of .
	local state pid
	state=$(state_of)
	pid=$(proxy_pid "$state")
	[ -n "$pid" ] || fail "no egress proxy"
	# the proxy's directory made readable by others: no proxy starts there
	kill "$pid"
	sleep 0.2
	chmod 0750 "$state/egress"
	run_gb 70 -p hi
	expect_error_line
	grep -q "the box's egress proxy .* did not start; see gemini-box --box-doctor" "$T/err" ||
		fail "a proxy that cannot start was not reported"
	# and the long way (a stopped box) names the directory and the fix
	run_gb 0 --box-stop
	run_gb 70 -p hi
	expect_error_line
	grep -q "the box's proxy directory .*egress: is not a private directory of yours; remove it" "$T/err" ||
		fail "a non-private proxy directory was not refused"
	chmod 0700 "$state/egress"
	run_gb 0 -p connect:127.0.0.1:1
	grep -q '^connect.reply=HTTP/1.1 403 ' "$T/out" || fail "no way out once the directory is private again"
	# a log that is a link is not read
	mv "$state/egress.log" "$T/log"
	ln -s "$T/log" "$state/egress.log"
	run_gb 70 --box-egress
	expect_error_line
	grep -q "cannot read .*egress.log" "$T/err" || fail "a linked log was read"
}

# The repository: a project file may narrow the network (to the allowlist),
# never widen it nor the list without approval.
@test "project_cannot_widen_egress" {
	mkdir -p .gemini
	echo '{"network": "allowlist", "egress": ["evil.example:443"]}' >.gemini/gemini-box.json
	run_gb 78 -p hi
	expect_error_line
	grep -q 'egress: a project file may not add hosts a box may reach without your approval' "$T/err" ||
		fail "the refusal does not say what and why"
	echo '{"network": "allowlist"}' >.gemini/gemini-box.json
	run_gb 0 -p hi
	expect_report
	expect_env HTTPS_PROXY http://127.0.0.1:3128
	box_of .
	grep -q evil "$(state_of)/egress.allow" && fail "the project's host reached the list"
	# nor lift the user's allowlist by choosing another network
	own_config '{"network": "allowlist"}'
	echo '{"network": "isolated"}' >.gemini/gemini-box.json
	run_gb 78 -p hi
	expect_error_line
	grep -q 'network: a project file may not widen the box.s network from "allowlist" to "isolated"' "$T/err" ||
		fail "a project lifted the allowlist, or said nothing of it"
	# gVisor cannot give the box its loopback: the combination is refused
	echo '{}' >.gemini/gemini-box.json
	own_config '{"network": "allowlist", "runtime": "runsc"}'
	run_gb 78 -p hi
	expect_error_line
	grep -q 'does not work with runtime runsc' "$T/err" || fail "runsc with an allowlist was not refused"
	return 0
}

# The list applies at every run without recreating the box; the proxy stops
# with the box and comes back with it, and a warm run restarts a proxy that
# died.
@test "egress_proxy_follows_the_box" {
	start_origin first
	start_origin second
	own_config "{\"network\": \"allowlist\", \"egress\": [\"127.0.0.1:$first_PORT\"]}"
	run_gb 0 -p "connect:127.0.0.1:$second_PORT"
	grep -q '^connect.reply=HTTP/1.1 403' "$T/out" || fail "an unlisted host was reached"
	box_of .
	local id=$BOX state pid
	state=$(state_of)
	pid=$(proxy_pid "$state")
	[ -n "$pid" ] || fail "no egress proxy runs for the box"
	# listed now: reached at the next run, in the same box
	own_config "{\"network\": \"allowlist\", \"egress\": [\"127.0.0.1:$first_PORT\", \"127.0.0.1:$second_PORT\"]}"
	run_gb 0 -p "connect:127.0.0.1:$second_PORT"
	grep -q '^connect.reply=HTTP/1.1 200 Connection established' "$T/out" || fail "a newly listed host was not reached"
	box_of .
	expect_eq "$BOX" "$id" "the box after the list changed"
	run_gb 0 --box-doctor
	grep -q '^OK    network allowlist: ' "$T/out" || fail "--box-doctor does not report the mode"
	grep -q '^OK    egress proxy running' "$T/out" || fail "--box-doctor does not see the proxy"
	# the box stops: its proxy goes
	run_gb 0 --box-stop
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && fail "the proxy outlived its box by 10 s"
	[ -e "$state/egress/proxy.sock" ] && fail "the stopped proxy left its socket"
	# and comes back with it
	run_gb 0 -p "connect:127.0.0.1:$first_PORT"
	grep -q '^connect.reply=HTTP/1.1 200 Connection established' "$T/out" || fail "no way out after a restart"
	pid=$(proxy_pid "$state")
	[ -n "$pid" ] || fail "no proxy after the restart"
	# a proxy killed while the box runs: the doctor says so, the next run mends it
	kill "$pid"
	sleep 0.2
	run_gb 1 --box-doctor
	grep -q '^FAIL  the box runs without its egress proxy' "$T/out" || fail "--box-doctor misses a dead proxy"
	run_gb 0 -p "connect:127.0.0.1:$first_PORT"
	grep -q '^connect.reply=HTTP/1.1 200 Connection established' "$T/out" || fail "a warm run did not restart the proxy"
}

# The real gemini CLI in an allowlist box sends its model request through the
# proxy: its CONNECT to the Gemini API's host is in the log (with no internet
# here the host does not resolve, which is expected), and its usage
# statistics, not listed, are refused.
@test "real_gemini_goes_through_the_proxy" {
	[ -n "${GB_IT_REAL_IMAGE:-}" ] || skip "needs the real gemini image (run tests/system/run.sh as root: setup-machine.sh builds it)"
	podman image exists "$GB_IT_REAL_IMAGE" || fail "the real gemini image $GB_IT_REAL_IMAGE is missing"
	own_config '{"network": "allowlist"}'
	export GEMINI_IMAGE=$GB_IT_REAL_IMAGE GEMINI_API_KEY=dummy GEMINI_CLI_TRUST_WORKSPACE=true
	"$BIN" -p 'say hi' >"$T/out" 2>"$T/err" 3>/dev/null &
	local gb=$! i state= seen=
	defer "kill $gb 2>/dev/null"
	for ((i = 0; i < 120; i++)); do
		if [ -z "$state" ] && [ -n "$(boxes_of .)" ]; then
			box_of .
			state=$(state_of)
		fi
		if [ -n "$state" ] && grep -q '	CONNECT	generativelanguage.googleapis.com:443	' "$state/egress.log" 2>/dev/null; then
			seen=1
			break
		fi
		sleep 0.5
	done
	kill "$gb" 2>/dev/null || true
	[ -n "$seen" ] || fail "real gemini made no CONNECT to generativelanguage.googleapis.com:443 through the proxy in 60 s: $(cat "$state/egress.log" 2>/dev/null)"
	sed 's/^/  log| /' "$state/egress.log" | head -5
}
