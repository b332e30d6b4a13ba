/* libFuzzer target for the allowlist mode's policy (egress.h): the input is
 * what a box sends its proxy, a request head, and, after its first NUL, an
 * allow file's text. The head is parsed (whole, and cut at every length a
 * slow client could send), its origin form made, its host matched against
 * the rules; each log line made of it must be one line that reads back;
 * every rule of the list must check. Built and run by `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"
#include "strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	size_t head_len = strlen(text);
	const char *allow = head_len < size ? text + head_len + 1 : "";

	struct egress_rules rules;
	egress_rules_parse(allow, &rules);
	for (size_t i = 0; i < rules.n; i++)
		if (!rules.v[i].host[0])
			abort(); /* a rule always names something */

	struct egress_request req;
	const char *why = NULL;
	/* a head that arrives a few bytes at a time is read again each time */
	for (size_t cut = head_len > 64 ? head_len - 64 : 0; cut < head_len; cut++)
		if (egress_parse_request(text, cut, &req, &why) < 0 && (req.host[0] || req.method[0]))
			abort(); /* a refused head keeps nothing for the log */
	int rc = egress_parse_request(text, head_len, &req, &why);
	if (rc < 0 && (!why || req.host[0] || req.method[0]))
		abort();
	if (rc == 1) {
		if (req.head_len > head_len || req.port == 0 || req.port > 65535)
			abort();
		if (!req.connect) {
			char *head = egress_origin_head(text, &req);
			if (!strstr(head, "\r\n\r\n"))
				abort();
			free(head);
		}
		egress_match(&rules, req.host, req.port);
	}
	/* whatever was accepted, its log line is one line of eight fields */
	char *line = egress_log_line(0, EGRESS_DENY, req.method, req.host[0] ? req.host : "-",
	                             req.port, NULL, 0, 0, why ? why : "listed");
	if (strchr(line, '\n') != line + strlen(line) - 1)
		abort();
	struct egress_denial d;
	if (!egress_log_denial(line, &d))
		abort();
	egress_denial_clear(&d);
	free(line);
	egress_rules_clear(&rules);
	free(text);
	return 0;
}
