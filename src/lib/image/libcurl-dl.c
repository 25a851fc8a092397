/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcurl's pointers and loader (libcurl-dl.h), below every file that uses it. */
#include "libcurl-dl.h"

DEFINE_DLOPEN(libcurl, "libcurl.so.4", KM_LIBCURL_SYMBOLS)
