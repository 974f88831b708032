#pragma once
// ldns's headers for C++. ldns defines `bool` as a macro unless the C99 boolean is known to be
// there, which some compilers' <stdbool.h> does not say in C++ (clang's): say it, then include.
// Include this, never <ldns/ldns.h>.
#ifndef __bool_true_false_are_defined
#define __bool_true_false_are_defined 1
#endif
#include <ldns/ldns.h>
