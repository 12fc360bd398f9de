/*
 * ptio.h - small helpers shared by the libipt-based ptlab tools
 * (ptjson, ptgen, ptbench): whole-file I/O and libipt error names.
 *
 * The error names are libipt's enum pt_error_code spellings without the
 * "pte_" prefix, as docs/formats/packet-json.md "Errors and resynchronisation" uses.
 */
#ifndef PTLAB_PTIO_H
#define PTLAB_PTIO_H

#include <intel-pt.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/**
 * ptio_read_file() - read a whole file into a malloc'ed buffer.
 * @path: the file to read.
 * @size: receives the number of bytes read.
 *
 * Return: the buffer (at least one byte allocated, 16-byte aligned by malloc),
 * or NULL with a message on stderr.
 */
static inline uint8_t *ptio_read_file(const char *path, size_t *size)
{
	FILE *file;
	uint8_t *buf;
	long len;

	file = fopen(path, "rb");
	if (!file) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (fseek(file, 0, SEEK_END) != 0 || (len = ftell(file)) < 0 ||
	    fseek(file, 0, SEEK_SET) != 0) {
		fprintf(stderr, "%s: cannot size the file\n", path);
		fclose(file);
		return NULL;
	}
	buf = malloc((size_t)len + 1);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", path);
		fclose(file);
		return NULL;
	}
	if (len > 0 && fread(buf, 1, (size_t)len, file) != (size_t)len) {
		fprintf(stderr, "%s: short read\n", path);
		free(buf);
		fclose(file);
		return NULL;
	}
	fclose(file);
	*size = (size_t)len;
	return buf;
}

/**
 * ptio_write_file() - write @size bytes of @buf to @path.
 *
 * Return: 0 on success, -1 with a message on stderr.
 */
static inline int ptio_write_file(const char *path, const uint8_t *buf,
				  size_t size)
{
	FILE *file;

	file = fopen(path, "wb");
	if (!file) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (size > 0 && fwrite(buf, 1, size, file) != size) {
		fprintf(stderr, "%s: short write\n", path);
		fclose(file);
		return -1;
	}
	if (fclose(file) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/**
 * ptio_error_name() - libipt's name of a (negative) status code.
 *
 * Only the names a packet decoder can produce are spelled out; anything else
 * is a bug in the tool and is reported as "internal".
 */
static inline const char *ptio_error_name(int status)
{
	switch (pt_errcode(status)) {
	case pte_bad_opc:
		return "bad_opc";
	case pte_bad_packet:
		return "bad_packet";
	case pte_eos:
		return "eos";
	case pte_nosync:
		return "nosync";
	default:
		return "internal";
	}
}

#endif /* PTLAB_PTIO_H */
