/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libmount's pointers and loader (libmount-dl.h), below every file that uses it. */
#include "libmount-dl.h"

DEFINE_DLOPEN(libmount, "libmount.so.1", KM_LIBMOUNT_SYMBOLS)
