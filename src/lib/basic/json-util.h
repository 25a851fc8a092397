/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small jansson helpers shared by the parsers of outside JSON. */
#pragma once

#include "jansson-dl.h"

/* "an object", "a string", ... for messages such as "must be an array, not a string". */
const char *json_type_name(json_type t);
