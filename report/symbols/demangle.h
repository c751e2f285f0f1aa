/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demangle.h - C++ and Rust symbol names made readable.
 *
 * C++ (Itanium ABI) names go through libstdc++'s __cxa_demangle, loaded
 * with dlopen() the first time a mangled name is seen: stk stays a C
 * program with no C++ link or build dependency, and where libstdc++ is
 * absent names are simply left mangled.  Rust legacy names (_ZN...17h<hash>E)
 * are C++-demangled, then their hash is dropped and their $..$ escapes
 * decoded.  Rust v0 names (_R...) are left as they are.
 */
#ifndef STK_REPORT_DEMANGLE_H
#define STK_REPORT_DEMANGLE_H

struct demangler;

/* Returns a demangler (never loads anything until used), or NULL + ENOMEM. */
struct demangler *demangler__new(void);
void demangler__free(struct demangler *d);	/* accepts NULL */

/*
 * demangler__demangle() - readable form of @raw.
 * Returns a malloc'd string the caller frees, or NULL when @raw is not a
 * mangled name this demangler understands (or no demangler is available,
 * or out of memory): then use @raw as it is.
 */
char *demangler__demangle(struct demangler *d, const char *raw);

/*
 * demangle__shorten() - a demangled C++ function name without its return
 * type and parameter list (nor the qualifiers after it), in place, as
 * flame graphs usually show them (--short-names):
 *   "std::vector<int>::push_back(int const&)"  -> "std::vector<int>::push_back"
 *   "int max<int>(int, int)"                    -> "max<int>"
 *   "(anonymous namespace)::f(char*)"           -> "(anonymous namespace)::f"
 *   "S::operator()(int) const"                  -> "S::operator()"
 *   "f(int) [clone .cold]"                      -> "f [clone .cold]"
 * Template arguments stay (they tell instances apart).  A name without a
 * parameter list at its end (C, Rust, a variable) is left as it is.
 */
void demangle__shorten(char *name);

#endif
