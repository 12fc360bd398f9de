/*
 * ram-map: maps a window of the shared guest-RAM file (QEMU's memory-backend-file,
 * docs/qemu.md §4) into the controller, so collecting trace is one memcpy out of the
 * page cache instead of a pread system call through the VFS.
 *
 * A Node-API addon with three functions:
 *
 *   map(fd, offset, length) -> ArrayBuffer
 *       mmap(MAP_SHARED, PROT_READ|PROT_WRITE) of [offset, offset+length) of the open
 *       file fd. The ArrayBuffer is external: V8 never copies it, and its finalizer
 *       unmaps the window once no view of it is left. The fd may be closed afterwards.
 *
 *   populate(arrayBuffer, offset, length) -> undefined
 *       Faults [offset, offset+length) of a window in now, writable (MADV_POPULATE_WRITE,
 *       Linux 5.14; older kernels: one write per page of the byte already there), so the
 *       first collection of a new buffer costs no page faults.
 *
 *   release(arrayBuffer) -> undefined
 *       Replaces the window, in place, with private anonymous zero pages (MAP_FIXED):
 *       the file's pages are no longer referenced, so removing the file frees its
 *       memory at once, and a stale view reads zeros instead of faulting. The
 *       finalizer still unmaps the (now anonymous) range later.
 *
 * Errors are thrown as JavaScript Errors whose code is the errno name (EINVAL, ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <node_api.h>

#define PROT_RW (PROT_READ | PROT_WRITE)

/*
 * Every live window, so release() only ever touches memory map() created: given any
 * other ArrayBuffer it refuses rather than MAP_FIXED over the JavaScript heap. Worker
 * threads share the addon, hence the lock.
 */
struct window {
	void *addr;
	size_t length;
	struct window *next;
};

static struct window *windows;
static pthread_mutex_t windows_lock = PTHREAD_MUTEX_INITIALIZER;

static void add_window(struct window *w)
{
	pthread_mutex_lock(&windows_lock);
	w->next = windows;
	windows = w;
	pthread_mutex_unlock(&windows_lock);
}

static void remove_window(struct window *w)
{
	struct window **p;

	pthread_mutex_lock(&windows_lock);
	for (p = &windows; *p != NULL; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			break;
		}
	}
	pthread_mutex_unlock(&windows_lock);
}

static int is_window(void *addr, size_t length)
{
	struct window *w;
	int found = 0;

	pthread_mutex_lock(&windows_lock);
	for (w = windows; w != NULL && !found; w = w->next)
		found = w->addr == addr && w->length == length;
	pthread_mutex_unlock(&windows_lock);
	return found;
}

static napi_value throw_errno(napi_env env, const char *what, int err)
{
	const char *code = err == EINVAL ? "EINVAL" : err == ENOMEM ? "ENOMEM" :
			   err == EBADF ? "EBADF" : err == EACCES ? "EACCES" :
			   err == ENODEV ? "ENODEV" : err == EFAULT ? "EFAULT" : "EIO";

	napi_throw_error(env, code, what);
	return NULL;
}

static napi_value throw_type(napi_env env, const char *what)
{
	napi_throw_type_error(env, "EINVAL", what);
	return NULL;
}

/* A non-negative integral JavaScript number that fits in `max`, or -1. */
static int64_t get_size(napi_env env, napi_value v, int64_t max)
{
	double d;

	if (napi_get_value_double(env, v, &d) != napi_ok)
		return -1;
	if (!(d >= 0) || d > (double)max || d != (double)(int64_t)d)
		return -1;
	return (int64_t)d;
}

static void unmap_window(napi_env env, void *data, void *hint)
{
	struct window *w = hint;

	(void)env;
	remove_window(w);
	munmap(data, w->length);
	free(w);
}

static napi_value map_window(napi_env env, napi_callback_info info)
{
	size_t argc = 3;
	napi_value argv[3], result;
	int64_t fd, offset, length;
	long page = sysconf(_SC_PAGESIZE);
	struct window *w;
	void *addr;

	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 3)
		return throw_type(env, "map(fd, offset, length) takes three numbers");
	fd = get_size(env, argv[0], INT32_MAX);
	offset = get_size(env, argv[1], INT64_C(1) << 52);
	length = get_size(env, argv[2], INT64_C(1) << 40);
	if (fd < 0 || offset < 0 || length <= 0)
		return throw_type(env, "map: fd, offset and length must be integers, length > 0");
	if (offset % page != 0)
		return throw_type(env, "map: offset must be a multiple of the page size");

	w = malloc(sizeof(*w));
	if (w == NULL)
		return throw_errno(env, "map: out of memory", ENOMEM);
	addr = mmap(NULL, (size_t)length, PROT_RW, MAP_SHARED, (int)fd, (off_t)offset);
	if (addr == MAP_FAILED) {
		int err = errno;

		free(w);
		return throw_errno(env, "map: mmap of the guest-RAM file failed", err);
	}
	w->addr = addr;
	w->length = (size_t)length;
	if (napi_create_external_arraybuffer(env, addr, w->length, unmap_window, w, &result) != napi_ok) {
		munmap(addr, w->length);
		free(w);
		return throw_errno(env, "map: the runtime refused an external ArrayBuffer", ENOMEM);
	}
	add_window(w);
	return result;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The window behind argv[0], checked to be one of ours; NULL after throwing. */
static void *window_arg(napi_env env, napi_value v, size_t *length)
{
	bool is_ab = false;
	void *addr;

	if (napi_is_arraybuffer(env, v, &is_ab) != napi_ok || !is_ab ||
	    napi_get_arraybuffer_info(env, v, &addr, length) != napi_ok ||
	    !is_window(addr, *length)) {
		throw_type(env, "not a window that map() returned");
		return NULL;
	}
	return addr;
}

static napi_value populate_window(napi_env env, napi_callback_info info)
{
	size_t argc = 3, length;
	napi_value argv[3];
	int64_t offset, count;
	long page = sysconf(_SC_PAGESIZE);
	volatile uint8_t *p;
	uint8_t *addr;
	int64_t at;

	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 3)
		return throw_type(env, "populate(arrayBuffer, offset, length) takes a window and two numbers");
	addr = window_arg(env, argv[0], &length);
	if (addr == NULL)
		return NULL;
	offset = get_size(env, argv[1], (int64_t)length);
	count = get_size(env, argv[2], (int64_t)length);
	if (offset < 0 || count < 0 || offset + count > (int64_t)length)
		return throw_type(env, "populate: the range lies outside the window");
	if (count == 0)
		return NULL;
	/* madvise wants a page-aligned start: widen the range down to its page. */
	at = offset - offset % page;
	if (madvise(addr + at, (size_t)(offset + count - at), MADV_POPULATE_WRITE) == 0)
		return NULL;
	if (errno != EINVAL) /* e.g. EFAULT/ENOMEM: touching would raise SIGBUS instead */
		return throw_errno(env, "populate: the kernel could not fault the range in", errno);
	for (p = addr + at; p < addr + offset + count; p += page)
		*p = *p;
	return NULL;
}

static napi_value release_window(napi_env env, napi_callback_info info)
{
	size_t argc = 1, length;
	napi_value argv[1];
	void *addr;

	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 1)
		return throw_type(env, "release(arrayBuffer) takes a window that map() returned");
	addr = window_arg(env, argv[0], &length);
	if (addr == NULL)
		return NULL;
	if (mmap(addr, length, PROT_RW, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return throw_errno(env, "release: could not replace the window", errno);
	return NULL;
}

NAPI_MODULE_INIT()
{
	napi_property_descriptor fns[] = {
		{ "map", NULL, map_window, NULL, NULL, NULL, napi_enumerable, NULL },
		{ "populate", NULL, populate_window, NULL, NULL, NULL, napi_enumerable, NULL },
		{ "release", NULL, release_window, NULL, NULL, NULL, napi_enumerable, NULL },
	};

	if (napi_define_properties(env, exports, 3, fns) != napi_ok)
		return NULL;
	return exports;
}
