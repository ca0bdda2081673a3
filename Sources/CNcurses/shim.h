// ncursesw with static inline wrappers for the macros Swift cannot import.
// Prefix: cnc_. The console's screen is the only caller, from one thread.
#ifndef CNCURSES_SHIM_H
#define CNCURSES_SHIM_H
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#include <ncurses.h>
#include <locale.h>
#include <langinfo.h>

static inline WINDOW *cnc_stdscr(void) { return stdscr; }
static inline int cnc_lines(void) { return LINES; }
static inline int cnc_cols(void) { return COLS; }
static inline int cnc_getmaxy(WINDOW *w) { return getmaxy(w); }
static inline int cnc_getmaxx(WINDOW *w) { return getmaxx(w); }
static inline int cnc_color_pair(int n) { return (int)COLOR_PAIR(n); }
static inline int cnc_attr_normal(void) { return (int)A_NORMAL; }
static inline int cnc_attr_bold(void) { return (int)A_BOLD; }
static inline int cnc_attr_dim(void) { return (int)A_DIM; }
static inline int cnc_attr_reverse(void) { return (int)A_REVERSE; }
static inline int cnc_attr_underline(void) { return (int)A_UNDERLINE; }
static inline int cnc_color_pairs(void) { return COLOR_PAIRS; }
static inline int cnc_key_resize(void) { return KEY_RESIZE; }
static inline int cnc_err(void) { return ERR; }
static inline int cnc_key_f(int n) { return KEY_F(n); }
static inline int cnc_attrset(int a) { return attrset((attr_t)a); }
static inline int cnc_mvaddnstr(int y, int x, const char *s, int n) { return mvaddnstr(y, x, s, n); }
/// Swift cannot read the `setlocale` category macros in every libc; wrap the one we need.
static inline char *cnc_setlocale_all_from_env(void) { return setlocale(LC_ALL, ""); }
static inline const char *cnc_codeset(void) { return nl_langinfo(CODESET); }
#endif
