/* hash: SHA-256 from libcrypto, the one place that computes it.
 *
 * It uses libcrypto's direct SHA-256 functions rather than EVP: EVP's first
 * use loads OpenSSL 3's provider machinery, about 0.5 ms and 1.5 MB, paid on
 * every launch, for a digest of a few bytes. */
#ifndef GEMINI_BOX_HASH_H
#define GEMINI_BOX_HASH_H

#include <stddef.h>

struct hash {
	unsigned long long state[16]; /* a SHA256_CTX, kept opaque here */
};

/* Hex digits of a short id: 12 (48 bits) everywhere gemini-box names things. */
#define HASH_ID_HEX 12

void hash_begin(struct hash *h);
void hash_add(struct hash *h, const void *data, size_t len);
/* A NUL-terminated string, its NUL included, so ("ab","c") and ("a","bc") differ. */
void hash_add_str(struct hash *h, const char *s);
/* Writes the first HASH_ID_HEX hex digits of the digest and a NUL. */
void hash_end_id(struct hash *h, char out[HASH_ID_HEX + 1]);

/* The whole digest, for what must resist a forged second input (approvals). */
#define HASH_FULL_HEX 64
void hash_end_full(struct hash *h, char out[HASH_FULL_HEX + 1]);

#endif
