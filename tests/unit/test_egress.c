/* Unit tests: the allowlist mode's policy (egress.h), hostile input included. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "egress.h"

static void test_rule_problems(void **state)
{
	(void)state;
	const char *good[] = { "example.com",
		               "example.com:443",
		               "*.example.com",
		               "*.example.com:8080",
		               "1.2.3.4",
		               "1.2.3.4:80",
		               "[::1]",
		               "[::1]:8080",
		               "localhost",
		               "a_b.example",
		               "x" };
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		assert_null(egress_rule_problem(good[i]));
	const char *bad[] = { "",
		              "*",
		              "*.",
		              "*.*.com",
		              "**.com",
		              "example.com:",
		              "example.com:0",
		              "example.com:65536",
		              "example.com:-1",
		              "example.com:80:80",
		              "http://example.com",
		              "exa mple.com",
		              "example.com/",
		              ".example.com",
		              "example..com",
		              "example.com.",
		              "-example.com",
		              "[1.2.3.4]",
		              "[::1",
		              "[nothost]:80",
		              "*.1.2.3.4",
		              "ex\nample.com",
		              "a@b.com",
		              "example.com:8o",
		              "::1" /* brackets, or its colons read as a port */ };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_non_null(egress_rule_problem(bad[i]));
}

static const struct egress_rule *match(const char *text, const char *host, unsigned port)
{
	static struct egress_rules rules;
	egress_rules_clear(&rules);
	egress_rules_parse(text, &rules);
	return egress_match(&rules, host, port);
}

static void test_matching(void **state)
{
	(void)state;
	const char *list = "example.com:443\n*.googleapis.com\n10.0.0.5:8080\n[::1]:9000\n"
	                   "bad rule here\nAny.Case.Org\n";
	assert_non_null(match(list, "example.com", 443));
	assert_non_null(match(list, "EXAMPLE.com", 443));
	assert_non_null(match(list, "example.com.", 443)); /* the root's dot */
	assert_null(match(list, "example.com", 80));       /* the rule's port only */
	assert_null(match(list, "www.example.com", 443));  /* a name is not its domain */
	assert_null(match(list, "example.com.evil.net", 443));
	assert_null(match(list, "evilexample.com", 443));
	assert_non_null(match(list, "generativelanguage.googleapis.com", 443));
	assert_non_null(match(list, "a.b.googleapis.com", 1234)); /* no port: any */
	assert_null(match(list, "googleapis.com", 443));          /* "*." needs a label */
	assert_null(match(list, "xgoogleapis.com", 443));
	assert_null(match(list, "googleapis.com.evil.net", 443));
	assert_non_null(match(list, "any.case.org", 1));
	/* addresses only by the rule naming them, in any spelling */
	assert_non_null(match(list, "10.0.0.5", 8080));
	assert_null(match(list, "10.0.0.5", 8081));
	assert_non_null(match(list, "::1", 9000));
	assert_non_null(match(list, "0:0::1", 9000));
	assert_null(match(list, "::2", 9000));
	/* a name rule never lets an address through, nor a wildcard one */
	assert_null(match("*.0.0.1\n", "127.0.0.1", 80));
	assert_null(match("localhost\n", "127.0.0.1", 80));
	/* the invalid line is skipped, not matched */
	assert_null(match(list, "bad rule here", 443));
	assert_null(match(list, "", 443));
	assert_null(match("", "example.com", 443));
	assert_null(match(NULL, "example.com", 443));
	match("", "", 0); /* frees the last rules */
}

static void test_allow_text(void **state)
{
	(void)state;
	struct list_item items[] = { { (char *)"registry.npmjs.org", { ORIGIN_USER, "f" } } };
	struct item_list extra = { items, 1 };
	char *text = egress_allow_text(&extra);
	/* the defaults first, then the settings' hosts, each on its own line */
	assert_non_null(strstr(text, "generativelanguage.googleapis.com:443\n"));
	assert_non_null(strstr(text, "cloudcode-pa.googleapis.com:443\n"));
	assert_non_null(strstr(text, "oauth2.googleapis.com:443\n"));
	size_t n = strlen(text);
	assert_string_equal(text + n - strlen("registry.npmjs.org\n"), "registry.npmjs.org\n");
	struct egress_rules rules;
	egress_rules_parse(text, &rules);
	assert_int_equal(rules.n, egress_n_defaults + 1);
	egress_rules_clear(&rules);
	free(text);
	for (size_t i = 0; i < egress_n_defaults; i++) {
		assert_null(egress_rule_problem(egress_defaults[i].rule));
		assert_non_null(egress_defaults[i].why);
	}
}

static bool internal4(const char *a)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	assert_int_equal(inet_pton(AF_INET, a, &sa.sin_addr), 1);
	return egress_address_internal((struct sockaddr *)&sa);
}

static bool internal6(const char *a)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
	assert_int_equal(inet_pton(AF_INET6, a, &sa.sin6_addr), 1);
	return egress_address_internal((struct sockaddr *)&sa);
}

static void test_internal_addresses(void **state)
{
	(void)state;
	const char *in4[] = { "127.0.0.1",      "127.255.255.254", "10.1.2.3",        "172.16.0.1",
		              "172.31.255.255", "192.168.1.1",     "169.254.169.254", "0.0.0.0",
		              "100.64.0.1",     "224.0.0.1",       "255.255.255.255", "192.0.0.8",
		              "192.0.2.1",      "198.51.100.7",    "203.0.113.9" };
	for (size_t i = 0; i < sizeof(in4) / sizeof(*in4); i++)
		assert_true(internal4(in4[i]));
	const char *out4[] = { "8.8.8.8",     "142.250.1.1", "172.32.0.1", "172.15.255.255",
		               "100.128.0.1", "11.0.0.1",    "192.169.0.1" };
	for (size_t i = 0; i < sizeof(out4) / sizeof(*out4); i++)
		assert_false(internal4(out4[i]));
	const char *in6[] = { "::1",
		              "::",
		              "fe80::1",
		              "fc00::1",
		              "fd12:3456::1",
		              "ff02::1",
		              "::ffff:127.0.0.1",
		              "::ffff:10.0.0.1",
		              "::127.0.0.1",
		              "64:ff9b::a9fe:a9fe",
		              "64:ff9b:1::1",
		              "fec0::1",
		              "100::1",
		              "2001:db8::1",
		              "2002:7f00:1::1",
		              "2002:c0a8:101::" };
	for (size_t i = 0; i < sizeof(in6) / sizeof(*in6); i++)
		assert_true(internal6(in6[i]));
	const char *out6[] = { "2001:4860:4860::8888", "2a00:1450::1", "::ffff:8.8.8.8",
		               "64:ff9b::808:808", "2002:808:808::1" };
	for (size_t i = 0; i < sizeof(out6) / sizeof(*out6); i++)
		assert_false(internal6(out6[i]));
	struct sockaddr other = { .sa_family = AF_UNIX };
	assert_true(egress_address_internal(&other)); /* not the internet */
}

static int parse(const char *head, struct egress_request *req, const char **why)
{
	return egress_parse_request(head, strlen(head), req, why);
}

static void test_requests(void **state)
{
	(void)state;
	struct egress_request r;
	const char *why = NULL;
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n", &r, &why), 1);
	assert_true(r.connect);
	assert_string_equal(r.method, "CONNECT");
	assert_string_equal(r.host, "example.com");
	assert_int_equal(r.port, 443);
	assert_int_equal(r.head_len, strlen("CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"));
	assert_int_equal(parse("CONNECT [::1]:8080 HTTP/1.1\r\n\r\n", &r, &why), 1);
	assert_string_equal(r.host, "::1");
	assert_int_equal(r.port, 8080);
	/* incomplete: more bytes wanted */
	assert_int_equal(parse("CONNECT example.com:443 HTTP/1.1\r\n", &r, &why), 0);
	assert_int_equal(parse("", &r, &why), 0);
	/* plain HTTP with an absolute URI */
	/* a Host that names another site behind the same front end, and a
	 * keep-alive that would carry unchecked requests after this one */
	const char *get =
	        "GET http://Example.com:8080/a/b?c=d HTTP/1.1\r\nHost: fronted.example\r\n"
	        "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n"
	        "Connection: keep-alive\r\nAccept: */*\r\n\r\nBODY";
	assert_int_equal(parse(get, &r, &why), 1);
	assert_false(r.connect);
	assert_string_equal(r.host, "Example.com");
	assert_int_equal(r.port, 8080);
	char *head = egress_origin_head(get, &r);
	assert_string_equal(head,
	                    "GET /a/b?c=d HTTP/1.1\r\nAccept: */*\r\nHost: Example.com:8080\r\n"
	                    "Connection: close\r\n\r\n");
	free(head);
	assert_int_equal(parse("GET http://example.com HTTP/1.0\r\n\r\n", &r, &why), 1);
	assert_int_equal(r.port, 80);
	head = egress_origin_head("GET http://example.com HTTP/1.0\r\n\r\n", &r);
	assert_string_equal(head,
	                    "GET / HTTP/1.0\r\nHost: example.com\r\nConnection: close\r\n\r\n");
	free(head);
	assert_int_equal(parse("GET http://[::1]:81/ HTTP/1.1\r\n\r\n", &r, &why), 1);
	head = egress_origin_head("GET http://[::1]:81/ HTTP/1.1\r\n\r\n", &r);
	assert_string_equal(head, "GET / HTTP/1.1\r\nHost: [::1]:81\r\nConnection: close\r\n\r\n");
	free(head);
	/* refused, each with a reason */
	const char *bad[] = {
		"CONNECT example.com HTTP/1.1\r\n\r\n",       /* no port */
		"CONNECT example.com:0 HTTP/1.1\r\n\r\n",     /* port 0 */
		"CONNECT example.com:99999 HTTP/1.1\r\n\r\n", /* port out of range */
		"CONNECT ex ample.com:443 HTTP/1.1\r\n\r\n",  /* four words */
		"CONNECT exa\tmple.com:443 HTTP/1.1\r\n\r\n", /* a tab in the name */
		"GET /local HTTP/1.1\r\n\r\n",                /* origin form: not a proxy request */
		"GET https://example.com/ HTTP/1.1\r\n\r\n",  /* https:// needs CONNECT */
		"GET http://user@example.com/ HTTP/1.1\r\n\r\n",   /* userinfo */
		"GET http:///x HTTP/1.1\r\n\r\n",                  /* no host */
		"GET http://ex%61mple.com/ HTTP/1.1\r\n\r\n",      /* escapes in the host */
		"get http://example.com/ HTTP/1.1\r\n\r\n",        /* method case */
		"CONNECT example.com:443 HTTP/2.0\r\n\r\n",        /* not 1.x */
		"CONNECT example.com:443\r\n\r\n",                 /* no version */
		"CONNECT  example.com:443 HTTP/1.1\r\n\r\n",       /* empty target */
		"VERYLONGMETHODNAMEXX http://a/ HTTP/1.1\r\n\r\n", /* method too long */
		"\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		why = NULL;
		assert_int_equal(parse(bad[i], &r, &why), -1);
		assert_non_null(why);
		/* nothing of a refused head is kept for the log */
		assert_string_equal(r.method, "");
		assert_string_equal(r.host, "");
	}
	/* a bracketed host with a newline and tabs: lines forged in the log,
	 * were its words kept */
	const char *forge =
	        "CONNECT [a\n2026-11-29T22:00:00Z\tallow\tCONNECT\tx:443\t]:1 HTTP/1.1\r\n\r\n";
	assert_int_equal(parse(forge, &r, &why), -1);
	assert_string_equal(r.host, "");
	/* a bare LF or CR, or a NUL: the server could read other fields */
	const char *smuggle[] = {
		"GET http://a.example/ HTTP/1.1\r\nX: a\nHost: fronted.example\r\n\r\n",
		"GET http://a.example/ HTTP/1.1\r\nX: a\rHost: b\r\n\r\n",
		"CONNECT a.example:443 HTTP/1.1\nHost: b\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(smuggle) / sizeof(*smuggle); i++)
		assert_int_equal(parse(smuggle[i], &r, &why), -1);
	static const char nul[] = "GET http://a/ HTTP/1.1\r\nX: \0\r\n\r\n";
	assert_int_equal(egress_parse_request(nul, sizeof(nul) - 1, &r, &why), -1);
	/* a body: its one Content-Length, or none at all */
	assert_int_equal(
	        parse("POST http://a.example/ HTTP/1.1\r\nContent-Length: 12\r\n\r\n", &r, &why),
	        1);
	assert_int_equal(r.body, 12);
	assert_int_equal(parse("GET http://a.example/ HTTP/1.1\r\n\r\n", &r, &why), 1);
	assert_int_equal(r.body, 0);
	const char *bodies[] = {
		"POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST http://a/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		"POST http://a/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"POST http://a/ HTTP/1.1\r\nContent-Length: 1x\r\n\r\n",
		"POST http://a/ HTTP/1.1\r\nContent-Length: 9999999999999999\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bodies) / sizeof(*bodies); i++)
		assert_int_equal(parse(bodies[i], &r, &why), -1);
	/* a tunnel's headers are the client's business */
	assert_int_equal(
	        parse("CONNECT a.example:443 HTTP/1.1\r\nTransfer-Encoding: x\r\n\r\n", &r, &why),
	        1);
	/* a head that never ends is refused once it is too long */
	size_t big = 20000;
	char *flood = malloc(big + 1);
	memset(flood, 'a', big);
	flood[big] = '\0';
	assert_int_equal(egress_parse_request(flood, big, &r, &why), -1);
	assert_int_equal(egress_parse_request(flood, 100, &r, &why), 0);
	free(flood);
}

static void test_log_lines(void **state)
{
	(void)state;
	char *line = egress_log_line(0, EGRESS_DENY, "CONNECT", "evil.example", 443, NULL, 0, 0,
	                             "not in this box's egress list");
	assert_string_equal(line, "1970-01-01T00:00:00Z\tdeny\tCONNECT\tevil.example:443\t-\t0\t0\t"
	                          "not in this box's egress list\n");
	struct egress_denial d;
	assert_true(egress_log_denial(line, &d));
	assert_string_equal(d.time, "1970-01-01T00:00:00Z");
	assert_string_equal(d.verdict, "deny");
	assert_string_equal(d.method, "CONNECT");
	assert_string_equal(d.target, "evil.example:443");
	assert_string_equal(d.reason, "not in this box's egress list");
	egress_denial_clear(&d);
	free(line);
	line = egress_log_line(60, EGRESS_ERROR, "CONNECT", "x.example", 443, NULL, 0, 0,
	                       "cannot resolve x.example");
	assert_true(egress_log_denial(line, &d)); /* listed, but not reached */
	assert_string_equal(d.verdict, "error");
	egress_denial_clear(&d);
	free(line);
	line = egress_log_line(86400, EGRESS_ALLOW, "GET", "::1", 80, "::1", 10, 20, "listed");
	assert_string_equal(line,
	                    "1970-01-02T00:00:00Z\tallow\tGET\t[::1]:80\t::1\t10\t20\tlisted\n");
	assert_false(egress_log_denial(line, &d)); /* an allowed one is no denial */
	free(line);
	assert_false(egress_log_denial("", &d));
	assert_false(egress_log_denial("a\tdeny\tb", &d));
	assert_false(egress_log_denial("a\tdeny\tb\tc\td\te\tf\tg\th\n", &d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_problems), cmocka_unit_test(test_matching),
		cmocka_unit_test(test_allow_text),    cmocka_unit_test(test_internal_addresses),
		cmocka_unit_test(test_requests),      cmocka_unit_test(test_log_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
