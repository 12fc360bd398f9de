/*
 * pterrata - print the errata libipt's pt_cpu_errata() assigns to Intel
 * family 6 models 0..255 (any stepping: libipt ignores it), the oracle of
 * test/libipt/errata.test.ts for driver/hw/errata.ts.
 *
 * Usage: pterrata [STEPPING]
 *
 * Output: one line per model, "MODEL NAME..." with MODEL in hex (0x3d) and
 * the set struct pt_errata fields by name, in header order; a model libipt
 * rejects prints "MODEL error <pt_errstr>".
 */
#include <intel-pt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	unsigned long stepping = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;
	int model;

	for (model = 0; model < 256; model++) {
		struct pt_cpu cpu;
		struct pt_errata e;
		int err;

		memset(&cpu, 0, sizeof(cpu));
		memset(&e, 0, sizeof(e));
		cpu.vendor = pcv_intel;
		cpu.family = 6;
		cpu.model = (uint8_t) model;
		cpu.stepping = (uint8_t) stepping;

		err = pt_cpu_errata(&e, &cpu);
		printf("0x%02x", model);
		if (err < 0) {
			printf(" error %s\n", pt_errstr(pt_errcode(err)));
			continue;
		}
#define FIELD(name) do { if (e.name) printf(" " #name); } while (0)
		FIELD(bdm70);
		FIELD(bdm64);
		FIELD(skd007);
		FIELD(skd022);
		FIELD(skd010);
		FIELD(skl014);
		FIELD(apl12);
		FIELD(apl11);
		FIELD(skl168);
		FIELD(skz84);
#undef FIELD
		printf("\n");
	}
	return 0;
}
