// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin (plugin API 1, QEMU 7.2): the instructions executed per
 * translation block, by the block's first address and length, written at
 * exit as "ADDRESS COUNT" lines to the file out=PATH. harness/prof.sh maps
 * them to kernel symbols. Declares the few API functions it calls, so that
 * it builds without QEMU's headers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct { const char *target_name; int min, cur; int system_emulation; int smp_vcpus, max_vcpus; } qemu_info_t;
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*udata_cb)(qemu_plugin_id_t, void *);
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, tb_trans_cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *, enum qemu_plugin_op, void *, uint64_t);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, udata_cb, void *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

struct ent { uint64_t vaddr, n, insns; };
#define NB (1u << 22)
static struct ent *tab;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out = "/tmp/prof/out.txt";

static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t va = qemu_plugin_tb_vaddr(tb);
	size_t n = qemu_plugin_tb_n_insns(tb);
	uint64_t key = va ^ ((uint64_t)n << 56);
	struct ent *e;

	pthread_mutex_lock(&lock);
	{
		uint64_t i = (key * 0x9E3779B97F4A7C15ull) >> 42;
		for (;; i = (i + 1) & (NB - 1)) {
			e = &tab[i];
			if (!e->n) { e->vaddr = va; e->n = n; break; }
			if (e->vaddr == va && e->n == n) break;
		}
	}
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &e->insns, n);
}

static void atexit_cb(qemu_plugin_id_t id, void *u)
{
	FILE *f = fopen(out, "w");
	for (uint64_t i = 0; i < NB; i++)
		if (tab[i].insns)
			fprintf(f, "%lx %lu\n", (unsigned long)tab[i].vaddr, (unsigned long)tab[i].insns);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	if (argc > 0 && !strncmp(argv[0], "out=", 4))
		out = strdup(argv[0] + 4);
	tab = calloc(NB, sizeof(*tab));
	qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
	qemu_plugin_register_atexit_cb(id, atexit_cb, NULL);
	return 0;
}
