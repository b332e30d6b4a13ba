#define _GNU_SOURCE
#include "egress.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "strv.h"

/* Read in gemini-cli 0.61.0's npm bundle and the libraries it bundles
 * (@google/genai 1.30.0, google-auth-library 10.9.0); the README's
 * "Egress" gives the file and line of each. Hosts only a browser opens
 * (accounts.google.com) and telemetry (play.googleapis.com) are left out. */
const struct egress_default egress_defaults[] = {
	{ "generativelanguage.googleapis.com:443",
	  "Gemini API model calls with a key (@google/genai _api_client.ts)" },
	{ "cloudcode-pa.googleapis.com:443",
	  "Code Assist, the model calls of Login with Google (gemini-cli code_assist/server.ts)" },
	{ "oauth2.googleapis.com:443",
	  "Google login's token exchange and refresh (google-auth-library oauth2client.ts)" },
	{ "www.googleapis.com:443", "Google login's user info (gemini-cli code_assist/oauth2.ts)" },
	{ "aiplatform.googleapis.com:443",
	  "Vertex AI's global endpoint (@google/genai _api_client.ts)" },
};
const size_t egress_n_defaults = sizeof(egress_defaults) / sizeof(*egress_defaults);

#define HOST_MAX 253

static bool parse_port(const char *s, unsigned *port)
{
	size_t n = strlen(s);
	if (n == 0 || n > 5 || strspn(s, "0123456789") != n)
		return false;
	unsigned long v = strtoul(s, NULL, 10);
	if (v < 1 || v > 65535)
		return false;
	*port = (unsigned)v;
	return true;
}

static bool name_valid(const char *s, size_t n)
{
	if (n == 0 || n > HOST_MAX || s[0] == '.' || s[0] == '-' || s[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!(isalnum(c) || c == '-' || c == '.' || c == '_'))
			return false;
		if (c == '.' && i + 1 < n && s[i + 1] == '.')
			return false;
	}
	return true;
}

static bool is_ip(const char *host)
{
	unsigned char buf[sizeof(struct in6_addr)];
	return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

/* Splits "host[:port]" or "[v6][:port]"; host gets the bare host. */
static bool split_host_port(const char *s, char host[HOST_MAX + 1], unsigned *port,
                            bool port_required)
{
	const char *end, *rest;
	bool bracketed = s[0] == '[';
	if (bracketed) {
		end = strchr(s, ']');
		if (!end)
			return false;
		rest = end + 1;
		s++;
	} else {
		end = strchr(s, ':');
		if (!end)
			end = s + strlen(s);
		rest = end;
	}
	size_t n = (size_t)(end - s);
	if (n == 0 || n > HOST_MAX)
		return false;
	memcpy(host, s, n);
	host[n] = '\0';
	if (bracketed) {
		unsigned char buf[sizeof(struct in6_addr)];
		if (inet_pton(AF_INET6, host, buf) != 1)
			return false;
	}
	*port = 0;
	if (*rest == ':')
		return parse_port(rest + 1, port);
	return *rest == '\0' && !port_required;
}

const char *egress_rule_problem(const char *rule)
{
	static const char usage[] = "must be a host name, \"*.domain\" or an IP address, each "
	                            "with an optional \":port\", such as \"registry.npmjs.org\" "
	                            "or \"*.github.com:443\"";
	char host[HOST_MAX + 1];
	unsigned port;
	const char *s = strncmp(rule, "*.", 2) == 0 ? rule + 2 : rule;
	if (!split_host_port(s, host, &port, false))
		return usage;
	if (s != rule && is_ip(host))
		return usage;
	if (!is_ip(host) && !name_valid(host, strlen(host)))
		return usage;
	if (rule[0] == '[' && !strchr(host, ':'))
		return usage;
	return NULL;
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

void egress_rules_parse(const char *text, struct egress_rules *rules)
{
	rules->v = NULL;
	rules->n = 0;
	char *copy = xstrdup(text ? text : "");
	for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (egress_rule_problem(l))
			continue;
		bool wildcard = strncmp(l, "*.", 2) == 0;
		char host[HOST_MAX + 1];
		unsigned port;
		split_host_port(wildcard ? l + 2 : l, host, &port, false);
		lower(host);
		rules->v = xrealloc(rules->v, (rules->n + 1) * sizeof(*rules->v));
		rules->v[rules->n++] = (struct egress_rule){ .host = xstrdup(host),
			                                     .wildcard = wildcard,
			                                     .address = is_ip(host),
			                                     .port = port };
	}
	free(copy);
}

void egress_rules_clear(struct egress_rules *rules)
{
	for (size_t i = 0; i < rules->n; i++)
		free(rules->v[i].host);
	free(rules->v);
	rules->v = NULL;
	rules->n = 0;
}

char *egress_allow_text(const struct item_list *extra)
{
	struct strv lines = STRV_INIT;
	for (size_t i = 0; i < egress_n_defaults; i++)
		strv_pushf(&lines, "%s\n", egress_defaults[i].rule);
	for (size_t i = 0; extra && i < extra->n; i++)
		strv_pushf(&lines, "%s\n", extra->v[i].value);
	char *text = strv_join(&lines, "");
	strv_clear(&lines);
	return text;
}

/* Two spellings of one address ("::1" and "0::1") are one address. */
static bool same_address(const char *a, const char *b)
{
	unsigned char x[sizeof(struct in6_addr)], y[sizeof(struct in6_addr)];
	if (inet_pton(AF_INET, a, x) == 1)
		return inet_pton(AF_INET, b, y) == 1 && memcmp(x, y, 4) == 0;
	if (inet_pton(AF_INET6, a, x) == 1)
		return inet_pton(AF_INET6, b, y) == 1 && memcmp(x, y, 16) == 0;
	return false;
}

const struct egress_rule *egress_match(const struct egress_rules *rules, const char *host,
                                       unsigned port)
{
	char name[HOST_MAX + 1];
	size_t n = strlen(host);
	if (n == 0 || n > HOST_MAX)
		return NULL;
	memcpy(name, host, n + 1);
	lower(name);
	/* "example.com." is "example.com" */
	if (n > 1 && name[n - 1] == '.')
		name[--n] = '\0';
	bool ip = is_ip(name);
	for (size_t i = 0; i < rules->n; i++) {
		const struct egress_rule *r = &rules->v[i];
		if (r->port && r->port != port)
			continue;
		if (r->address) {
			if (ip && same_address(r->host, name))
				return r;
		} else if (ip) {
			continue; /* a name never lets an address literal through */
		} else if (r->wildcard) {
			size_t d = strlen(r->host);
			if (n > d + 1 && name[n - d - 1] == '.' &&
			    strcmp(name + n - d, r->host) == 0)
				return r;
		} else if (strcmp(name, r->host) == 0) {
			return r;
		}
	}
	return NULL;
}

static bool v4_internal(uint32_t a)
{
	static const struct {
		uint32_t net;
		int bits;
	} ranges[] = {
		{ 0x00000000, 8 },  /* "this network" */
		{ 0x0a000000, 8 },  /* private */
		{ 0x64400000, 10 }, /* shared address space (CGNAT) */
		{ 0x7f000000, 8 },  /* loopback */
		{ 0xa9fe0000, 16 }, /* link-local (cloud metadata services) */
		{ 0xac100000, 12 }, /* private */
		{ 0xc0000000, 24 }, /* IETF protocol assignments */
		{ 0xc0000200, 24 }, /* documentation (TEST-NET-1) */
		{ 0xc6336400, 24 }, /* documentation (TEST-NET-2) */
		{ 0xcb007100, 24 }, /* documentation (TEST-NET-3) */
		{ 0xc0a80000, 16 }, /* private */
		{ 0xc6120000, 15 }, /* benchmarking */
		{ 0xe0000000, 4 },  /* multicast */
		{ 0xf0000000, 4 },  /* reserved, broadcast */
	};
	for (size_t i = 0; i < sizeof(ranges) / sizeof(*ranges); i++)
		if ((a >> (32 - ranges[i].bits)) == (ranges[i].net >> (32 - ranges[i].bits)))
			return true;
	return false;
}

bool egress_address_internal(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
		return v4_internal(ntohl(in->sin_addr.s_addr));
	}
	if (sa->sa_family != AF_INET6)
		return true;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
	const unsigned char *b = in6->sin6_addr.s6_addr;
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const unsigned char zero[15] = { 0 };
	if (memcmp(b, mapped, 12) == 0 || (memcmp(b, zero, 12) == 0 && (b[12] | b[13]))) {
		/* ::ffff:a.b.c.d, and the old ::a.b.c.d */
		uint32_t a = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 |
		             b[15];
		return v4_internal(a);
	}
	if (memcmp(b, zero, 15) == 0)
		return true; /* :: and ::1 */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return true; /* link-local */
	if ((b[0] & 0xfe) == 0xfc)
		return true; /* unique local */
	if (b[0] == 0xff)
		return true; /* multicast */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		return true; /* site-local (deprecated) */
	static const unsigned char discard[8] = { 0x01, 0x00 };
	if (memcmp(b, discard, 8) == 0)
		return true; /* 100::/64 */
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
		return true; /* documentation */
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0)
		return true; /* Teredo: an IPv4 address behind a relay, hidden */
	static const unsigned char translated[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0 };
	if (memcmp(b, translated, 12) == 0)
		return true; /* IPv4-translated (::ffff:0:a.b.c.d) */
	static const unsigned char nat64_local[6] = { 0, 0x64, 0xff, 0x9b, 0, 0x01 };
	if (memcmp(b, nat64_local, 6) == 0)
		return true; /* local-use NAT64 (64:ff9b:1::/48) */
	if (b[0] == 0x20 && b[1] == 0x02) {
		/* 6to4 (2002:AABB:CCDD::/48) carries the IPv4 address it reaches */
		uint32_t a =
		        (uint32_t)b[2] << 24 | (uint32_t)b[3] << 16 | (uint32_t)b[4] << 8 | b[5];
		return v4_internal(a);
	}
	/* NAT64 (64:ff9b::/96) reaches IPv4 through a gateway: judge that address */
	static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b };
	if (memcmp(b, nat64, 12) == 0) {
		uint32_t a = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 |
		             b[15];
		return v4_internal(a);
	}
	return false;
}

/* The longest head the proxy reads; a longer one is refused. */
#define HEAD_MAX 16384

static const char *find_crlf(const char *s, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++)
		if (s[i] == '\r' && s[i + 1] == '\n')
			return s + i;
	return NULL;
}

/* A plain-HTTP request's body: as long as its one Content-Length says (the
 * proxy forwards that much and no more); chunked bodies are refused. */
static int body_length(const char *buf, struct egress_request *req, const char **why)
{
	bool seen = false;
	const char *line = buf + req->line_end + 2, *end = buf + req->head_len - 2;
	while (line < end) {
		const char *eol = strstr(line, "\r\n");
		size_t len = (size_t)(eol - line);
		if (len > 17 && strncasecmp(line, "Transfer-Encoding:", 18) == 0) {
			*why = "a request body needs a Content-Length (no chunked uploads)";
			return -1;
		}
		if (len > 15 && strncasecmp(line, "Content-Length:", 15) == 0) {
			const char *v = line + 15;
			while (*v == ' ' || *v == '\t')
				v++;
			size_t digits = strspn(v, "0123456789");
			const char *rest = v + digits;
			while (*rest == ' ' || *rest == '\t')
				rest++;
			*why = "bad Content-Length";
			if (seen || digits == 0 || digits > 15 || rest != eol)
				return -1;
			req->body = strtoll(v, NULL, 10);
			seen = true;
		}
		line = eol + 2;
	}
	return 1;
}

static int parse_head(const char *buf, size_t len, struct egress_request *req, const char **why)
{
	memset(req, 0, sizeof(*req));
	const char *end = memmem(buf, len, "\r\n\r\n", 4);
	if (!end) {
		if (len >= HEAD_MAX) {
			*why = "request head too long";
			return -1;
		}
		return 0;
	}
	req->head_len = (size_t)(end - buf) + 4;
	const char *eol = find_crlf(buf, req->head_len);
	req->line_end = (size_t)(eol - buf);
	/* METHOD SP target SP HTTP/1.x */
	const char *sp1 = memchr(buf, ' ', req->line_end);
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	*why = "not an HTTP proxy request";
	if (!sp1 || !sp2 || sp1 == buf || (size_t)(sp1 - buf) >= sizeof(req->method) ||
	    (size_t)(eol - sp2 - 1) != 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0)
		return -1;
	memcpy(req->method, buf, (size_t)(sp1 - buf));
	req->method[sp1 - buf] = '\0';
	for (const char *m = req->method; *m; m++)
		if (!isupper((unsigned char)*m))
			return -1;
	const char *target = sp1 + 1;
	size_t tlen = (size_t)(sp2 - target);
	char authority[HOST_MAX + 16];
	if (strcmp(req->method, "CONNECT") == 0) {
		req->connect = true;
		if (tlen == 0 || tlen >= sizeof(authority))
			return -1;
		memcpy(authority, target, tlen);
		authority[tlen] = '\0';
		*why = "CONNECT needs host:port";
		if (!split_host_port(authority, req->host, &req->port, true))
			return -1;
	} else {
		*why = "only CONNECT and http:// URIs go through this proxy";
		if (tlen < 8 || strncasecmp(target, "http://", 7) != 0)
			return -1;
		const char *a = target + 7;
		const char *path = memchr(a, '/', (size_t)(sp2 - a));
		const char *aend = path ? path : sp2;
		size_t alen = (size_t)(aend - a);
		*why = "bad host in the URI";
		if (alen == 0 || alen >= sizeof(authority) || memchr(a, '@', alen) ||
		    memchr(a, '?', alen) || memchr(a, '#', alen))
			return -1;
		memcpy(authority, a, alen);
		authority[alen] = '\0';
		if (!split_host_port(authority, req->host, &req->port, false))
			return -1;
		if (req->port == 0)
			req->port = 80;
		req->target_at = path ? (size_t)(path - buf) : 0;
		req->target_end = (size_t)(sp2 - buf);
	}
	*why = "bad host";
	if (!is_ip(req->host) && !name_valid(req->host, strlen(req->host)))
		return -1;
	/* Every line ends in CRLF, and nothing else in the head is a CR, an LF
	 * or a NUL: a server that splits at a bare LF would see other fields (a
	 * Host of another site, a request after this one) than the proxy. */
	*why = "a line of the request head does not end in CRLF";
	for (size_t i = 0; i < req->head_len; i++) {
		if (buf[i] == '\0' || (buf[i] == '\r' && buf[i + 1] != '\n') ||
		    (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r')))
			return -1;
	}
	return req->connect ? 1 : body_length(buf, req, why);
}

int egress_parse_request(const char *buf, size_t len, struct egress_request *req, const char **why)
{
	int rc = parse_head(buf, len, req, why);
	/* A refused head's words are the box's, unchecked: none of them may
	 * reach the log, where a newline or a tab would forge lines. */
	if (rc < 0)
		memset(req, 0, sizeof(*req));
	return rc;
}

static bool field_is(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);
	return len > n && strncasecmp(line, name, n) == 0 && line[n] == ':';
}

char *egress_origin_head(const char *buf, const struct egress_request *req)
{
	struct strv parts = STRV_INIT;
	const char *path = req->target_at ? buf + req->target_at : "/";
	size_t plen = req->target_at ? req->target_end - req->target_at : 1;
	strv_pushf(&parts, "%s %.*s %.8s\r\n", req->method, (int)plen, path,
	           buf + req->target_end + 1);
	const char *line = buf + req->line_end + 2;
	const char *head_end = buf + req->head_len - 2;
	while (line < head_end) {
		const char *eol = find_crlf(line, (size_t)(head_end - line) + 2);
		size_t len = (size_t)(eol - line);
		if (!field_is(line, len, "Proxy-Connection") &&
		    !field_is(line, len, "Proxy-Authorization") && !field_is(line, len, "Host") &&
		    !field_is(line, len, "Connection"))
			strv_pushf(&parts, "%.*s\r\n", (int)len, line);
		line = eol + 2;
	}
	/* The server sees the host that was checked, not another name a shared
	 * front end would serve (domain fronting), and one request only: the
	 * next one on the connection would not be checked. */
	bool v6 = strchr(req->host, ':') != NULL;
	strv_pushf(&parts, "Host: %s%s%s", v6 ? "[" : "", req->host, v6 ? "]" : "");
	if (req->port != 80)
		strv_pushf(&parts, ":%u", req->port);
	strv_push(&parts, "\r\nConnection: close\r\n\r\n");
	char *head = strv_join(&parts, "");
	strv_clear(&parts);
	return head;
}

char *egress_log_line(long long unix_time, const char *verdict, const char *method,
                      const char *host, unsigned port, const char *address, unsigned long long up,
                      unsigned long long down, const char *reason)
{
	time_t t = (time_t)unix_time;
	struct tm tm;
	char when[32];
	if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(when, sizeof(when), "%lld", unix_time);
	bool v6 = strchr(host, ':') != NULL;
	return xasprintf("%s\t%s\t%s\t%s%s%s:%u\t%s\t%llu\t%llu\t%s\n", when, verdict,
	                 *method ? method : "-", v6 ? "[" : "", host, v6 ? "]" : "", port,
	                 address && *address ? address : "-", up, down, reason);
}

bool egress_log_denial(const char *line, struct egress_denial *d)
{
	memset(d, 0, sizeof(*d));
	struct strv f = STRV_INIT;
	char *copy = xstrdup(line);
	copy[strcspn(copy, "\n")] = '\0';
	char *p = copy;
	for (char *tab; (tab = strchr(p, '\t')); p = tab + 1) {
		*tab = '\0';
		strv_push(&f, p);
	}
	strv_push(&f, p);
	bool ok =
	        f.n == 8 && (strcmp(f.v[1], EGRESS_DENY) == 0 || strcmp(f.v[1], EGRESS_ERROR) == 0);
	if (ok) {
		d->time = xstrdup(f.v[0]);
		d->verdict = xstrdup(f.v[1]);
		d->method = xstrdup(f.v[2]);
		d->target = xstrdup(f.v[3]);
		d->reason = xstrdup(f.v[7]);
	}
	strv_clear(&f);
	free(copy);
	return ok;
}

void egress_denial_clear(struct egress_denial *d)
{
	free(d->time);
	free(d->verdict);
	free(d->method);
	free(d->target);
	free(d->reason);
	memset(d, 0, sizeof(*d));
}
