/* SPDX-License-Identifier: MIT */
/*
 * array_const_class.c - compiled to assembly (-O2 -S) by tests/local.mk;
 * array_const_class.sh reads the result.  With a constant size, the class
 * must be picked at compile time: no bit scan (bsr, lzcnt) in const_get or
 * const_put.  var_get takes its size at run time and must have one, which
 * shows that the check looks at the right code.
 */
#include <lfpool.h>

void *const_get(lfpool_array *ap, size_t *real);
void const_put(lfpool_array *ap, void *buf);
void *var_get(lfpool_array *ap, size_t n, size_t *real);

void *const_get(lfpool_array *ap, size_t *real)
{
	return lfpool_array_get(ap, 64, real);
}

void const_put(lfpool_array *ap, void *buf)
{
	lfpool_array_put_sized(ap, buf, 64);
}

void *var_get(lfpool_array *ap, size_t n, size_t *real)
{
	return lfpool_array_get(ap, n, real);
}
