/* SPDX-License-Identifier: MIT */
#include "lfpool/common.h"

LFPOOL_API const char *lfpool_version(void)
{
	return LFPOOL_VERSION_STRING;
}
