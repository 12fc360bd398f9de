/* SPDX-License-Identifier: MIT */
/* sha256.h - SHA-256 (FIPS 180-4) for hashing module buffers inside the guest. */
#ifndef PTLAB_SHA256_H
#define PTLAB_SHA256_H
#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;
	unsigned char block[64];
	size_t fill;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, unsigned char out[32]);
#endif
