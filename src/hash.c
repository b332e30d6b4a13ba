/* SHA256_Init and friends are deprecated in OpenSSL 3 in favour of EVP, whose
 * cost is the reason they are used here (see hash.h). */
#define OPENSSL_API_COMPAT 0x10100000L
#include "hash.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(SHA256_CTX) <= sizeof(((struct hash *)0)->state),
               "struct hash too small for SHA256_CTX");

void hash_begin(struct hash *h)
{
	SHA256_Init((SHA256_CTX *)(void *)h->state);
}

void hash_add(struct hash *h, const void *data, size_t len)
{
	SHA256_Update((SHA256_CTX *)(void *)h->state, data, len);
}

void hash_add_str(struct hash *h, const char *s)
{
	hash_add(h, s, strlen(s) + 1);
}

void hash_end_id(struct hash *h, char out[HASH_ID_HEX + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256_Final(md, (SHA256_CTX *)(void *)h->state);
	for (int i = 0; i < HASH_ID_HEX / 2; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

void hash_end_full(struct hash *h, char out[HASH_FULL_HEX + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256_Final(md, (SHA256_CTX *)(void *)h->state);
	for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}
