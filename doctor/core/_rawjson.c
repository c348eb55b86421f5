/* Optional accelerator for doctor.core.rawjson: UTF-8 validation and the JavaScript length
 * (UTF-16 code units) of a JSON string token, counted from its raw bytes without decoding it.
 * doctor.core.rawjson holds the exact pure-Python definitions these agree with on what they
 * are given: the counters (string_units, string_span) trust their input (a token msgspec
 * accepted, in bytes valid_utf8 accepted) and do not validate it again; scan_line checks
 * every string itself, as JSON.parse would. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* The counters use popcount: without -mpopcnt the compiler calls a slow library routine, so each
 * counter is also compiled for CPUs that have the instruction and picked at import (DISPATCH). */
#if defined(__GNUC__)
#define INLINE inline __attribute__((always_inline))
#else
#define INLINE inline
#endif
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define DISPATCH(name)                                                                                      \
    static Py_ssize_t name##_generic(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop, Py_ssize_t *u) {  \
        return name##_in(p, i, stop, u);                                                                    \
    }                                                                                                       \
    __attribute__((target("popcnt"))) static Py_ssize_t name##_popcnt(const unsigned char *p, Py_ssize_t i,  \
                                                                      Py_ssize_t stop, Py_ssize_t *u) {      \
        return name##_in(p, i, stop, u);                                                                    \
    }                                                                                                       \
    static Py_ssize_t (*name)(const unsigned char *, Py_ssize_t, Py_ssize_t, Py_ssize_t *) = name##_generic;
/* The same for a function of any signature: DISPATCH_WITH(name, (parameters), (arguments)). */
#define DISPATCH_WITH(name, PARAMS, ARGS)                                                                   \
    static Py_ssize_t name##_generic PARAMS { return name##_in ARGS; }                                      \
    __attribute__((target("popcnt"))) static Py_ssize_t name##_popcnt PARAMS { return name##_in ARGS; }     \
    static Py_ssize_t(*name) PARAMS = name##_generic;
#define PICK(name) \
    if (__builtin_cpu_supports("popcnt")) name = name##_popcnt
#else
#define DISPATCH(name)                                                                                      \
    static Py_ssize_t name(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop, Py_ssize_t *u) {           \
        return name##_in(p, i, stop, u);                                                                    \
    }
#define DISPATCH_WITH(name, PARAMS, ARGS) \
    static Py_ssize_t name PARAMS { return name##_in ARGS; }
#define PICK(name)
#endif

/* Length of the valid UTF-8 sequence starting at p[0] (a byte >= 0x80), or 0 if invalid.
 * Strict as CPython's decoder: no overlongs, no encoded surrogates, nothing above U+10FFFF. */
static INLINE Py_ssize_t utf8_sequence(const unsigned char *p, Py_ssize_t left) {
    unsigned char c = p[0];
    if (c >= 0xC2 && c <= 0xDF) {
        return (left >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (left < 3 || (p[2] & 0xC0) != 0x80) return 0;
        unsigned char d = p[1];
        if (c == 0xE0) return (d >= 0xA0 && d <= 0xBF) ? 3 : 0;
        if (c == 0xED) return (d >= 0x80 && d <= 0x9F) ? 3 : 0;
        return ((d & 0xC0) == 0x80) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (left < 4 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        unsigned char d = p[1];
        if (c == 0xF0) return (d >= 0x90 && d <= 0xBF) ? 4 : 0;
        if (c == 0xF4) return (d >= 0x80 && d <= 0x8F) ? 4 : 0;
        return ((d & 0xC0) == 0x80) ? 4 : 0;
    }
    return 0;
}

static uint64_t load8(const unsigned char *p) {
    uint64_t word;
    memcpy(&word, p, 8);
    return word;
}

#define HIGHS 0x8080808080808080ULL

static PyObject *valid_utf8(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *p = view.buf;
    Py_ssize_t n = view.len, i = 0;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (;;) {
        while (i + 8 <= n && !(load8(p + i) & HIGHS)) i += 8;
        while (i < n && p[i] < 0x80) i++;
        if (i >= n) break;
        Py_ssize_t step = utf8_sequence(p + i, n - i);
        if (!step) { ok = 0; break; }
        i += step;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyBool_FromLong(ok);
}

/* All eight bytes are ASCII digits. */
static int all_digits(uint64_t w) {
    return (w & 0xF0F0F0F0F0F0F0F0ULL) == 0x3030303030303030ULL
        && (((w & 0x0F0F0F0F0F0F0F0FULL) + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) == 0;
}

/* valid_utf8, and no run of 309 or more ASCII digits: an integer that long is one orjson refuses as
 * infinite while msgspec accepts it, so a line holding one must take a reader's exact path. A run is
 * seen as 37 consecutive all-digit words (every 303-digit run holds them), so some runs of 296-308
 * digits are refused too: that only costs the exact path. */
static PyObject *fast_decodable(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *p = view.buf;
    Py_ssize_t n = view.len, i = 0;
    int ok = 1, run = 0;
    Py_BEGIN_ALLOW_THREADS
    for (;;) {
        while (i + 8 <= n) {
            uint64_t w = load8(p + i);
            if (w & HIGHS) break;
            run = all_digits(w) ? run + 1 : 0;
            if (run >= 37) { ok = 0; break; }
            i += 8;
        }
        if (!ok) break;
        run = 0;
        while (i < n && p[i] < 0x80) i++;
        if (i >= n) break;
        Py_ssize_t step = utf8_sequence(p + i, n - i);
        if (!step) { ok = 0; break; }
        i += step;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyBool_FromLong(ok);
}

#define ONES 0x0101010101010101ULL
#define LOWS 0x7F7F7F7F7F7F7F7FULL

/* The high bit of each byte of w that equals x, exactly (no carries between bytes). */
static INLINE uint64_t bytes_equal(uint64_t w, unsigned char x) {
    uint64_t t = w ^ (x * ONES);
    return ~(((t & LOWS) + LOWS) | t) & HIGHS;
}

/* Count a JSON string's body from p[i] (just past its opening quote) up to `stop`, trusting that
 * it is valid (msgspec accepted the JSON, valid_utf8 the bytes): the index just past its closing
 * quote, its JS length in *units_out; -1 when no closing quote comes before `stop`.
 * Each non-continuation byte is a unit and a 4-byte lead one more; an escape (a backslash not
 * itself escaped) takes one back, four more when it is \uXXXX. Eight bytes at a time when every
 * quote in them is escaped and they hold no \u, no two adjacent backslashes and no backslash
 * last; else byte by byte. */
static INLINE Py_ssize_t scan_string_in(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop, Py_ssize_t *units_out) {
    Py_ssize_t units = 0;
    int escape = 0; /* the previous byte started an escape */
    while (i < stop) {
        if (!escape && i + 8 <= stop) {
            uint64_t w = load8(p + i);
            uint64_t quotes = bytes_equal(w, '"'), slashes = bytes_equal(w, '\\');
            uint64_t after = slashes << 8; /* flags the byte after each backslash */
            if (!(quotes & ~after) && !(slashes & after) && !(after & bytes_equal(w, 'u')) && !(slashes >> 56)) {
                uint64_t continuation = w & ~(w << 1) & HIGHS;
                uint64_t four = w & (w << 1) & (w << 2) & (w << 3) & HIGHS;
                units += 8 - __builtin_popcountll(continuation) + __builtin_popcountll(four) - __builtin_popcountll(slashes);
                i += 8;
                continue;
            }
        }
        Py_ssize_t limit = i + 8 < stop ? i + 8 : stop;
        for (; i < limit; i++) {
            unsigned char c = p[i];
            if (c == '"' && !escape) {
                *units_out = units;
                return i + 1;
            }
            int starts = (c == '\\') & !escape;
            units += ((c & 0xC0) != 0x80) + (c >= 0xF0) - starts - 4 * (escape & (c == 'u'));
            escape = starts;
        }
    }
    return -1;
}

DISPATCH(scan_string)

static PyObject *string_units(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *p = view.buf;
    Py_ssize_t n = view.len, units = 0, end = -1;
    if (n >= 2 && p[0] == '"') {
        Py_BEGIN_ALLOW_THREADS
        end = scan_string(p, 1, n, &units);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    if (end != n) Py_RETURN_NONE;
    return PyLong_FromSsize_t(units);
}

/* The JSON string token starting at buffer[start] (a quote): (end, units), end just past its closing
 * quote, units its JS length; None when there is none before `stop` or it is not a valid token. */
static PyObject *string_span(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, stop, units = 0, end = -1;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &start, &stop)) return NULL;
    const unsigned char *p = view.buf;
    if (stop > view.len) stop = view.len;
    if (start >= 0 && start < stop && p[start] == '"') {
        Py_BEGIN_ALLOW_THREADS
        end = scan_string(p, start + 1, stop, &units);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    if (end < 0) Py_RETURN_NONE;
    return Py_BuildValue("(nn)", end, units);
}

/* What an escape character means: 0 invalid, 1 a one-character escape, 'u' four hex digits follow. */
static unsigned char escape_kind[256];

static INLINE int is_hex(unsigned char c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* Follow the \\uXXXX escape at p[at] for lone surrogates (what orjson refuses and JSON.parse keeps): a high
 * surrogate escape must be followed at once by a low one, a low one must follow a high one. `*high_end`
 * is where the low escape must start (-1: none pending); `*lone` is set when one is lone. Called for every
 * \\u escape of a string in order, then once with at = -1 at its end. */
static INLINE void note_surrogate(const unsigned char *p, Py_ssize_t at, Py_ssize_t *high_end, int *lone) {
    int high = 0, low = 0;
    if (at >= 0 && (p[at + 2] | 0x20) == 'd') {
        unsigned char second = p[at + 3] | 0x20;
        high = second == '8' || second == '9' || second == 'a' || second == 'b';
        low = second >= 'c' && second <= 'f';
    }
    if ((*high_end >= 0 || low) && !(low && *high_end == at)) *lone = 1;
    *high_end = high ? at + 6 : -1;
}

/* Check the escape whose backslash is at p[i]: the bytes it takes (2 or 6), or 0 when invalid. */
static INLINE Py_ssize_t escape_length(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop) {
    if (i + 1 >= stop) return 0;
    unsigned char kind = escape_kind[p[i + 1]];
    if (kind == 1) return 2;
    if (kind == 'u' && i + 6 <= stop && is_hex(p[i + 2]) && is_hex(p[i + 3]) && is_hex(p[i + 4]) && is_hex(p[i + 5]))
        return 6;
    return 0;
}

#if defined(__SSE2__)
#include <emmintrin.h>

typedef struct {
    uint64_t quote, slash, control, high, lead, four;
} Masks;

/* One bit per byte of p[0:64]: quotes, backslashes, control characters, bytes >= 0x80, and only
 * when there is a byte >= 0x80: bytes >= 0xC0 and >= 0xF0. */
static INLINE void block_masks(const unsigned char *p, Masks *m) {
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1F);
    __m128i v[4];
    uint64_t q = 0, b = 0, c = 0, h = 0;
    for (int k = 0; k < 4; k++) {
        v[k] = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        int shift = 16 * k;
        q |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v[k], quote)) << shift;
        b |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v[k], slash)) << shift;
        c |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v[k], control), control)) << shift;
        h |= (uint64_t)(uint16_t)_mm_movemask_epi8(v[k]) << shift;
    }
    m->quote = q, m->slash = b, m->control = c, m->high = h, m->lead = 0, m->four = 0;
    if (h) {
        const __m128i lead = _mm_set1_epi8((char)0xC0), four = _mm_set1_epi8((char)0xF0);
        uint64_t l = 0, f = 0;
        for (int k = 0; k < 4; k++) {
            int shift = 16 * k;
            l |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v[k], lead), v[k])) << shift;
            f |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v[k], four), v[k])) << shift;
        }
        m->lead = l, m->four = f;
    }
}

#define EVEN_BITS 0x5555555555555555ULL
#define ODD_BITS 0xAAAAAAAAAAAAAAAAULL

/* The backslashes of `slash` that start an escape, given whether bit 0 is escaped by the previous
 * block (`carried`): within each run of backslashes every other one, from the run's first. A start
 * ends up cleared from each run by adding the run's first bit: the carry runs through the run. */
static INLINE uint64_t escape_starts(uint64_t slash, uint64_t carried) {
    uint64_t b = slash & ~carried;
    uint64_t firsts = b & ~(b << 1);
    uint64_t even_runs = b & ~(b + (firsts & EVEN_BITS)), odd_runs = b & ~(b + (firsts & ODD_BITS));
    return (even_runs & EVEN_BITS) | (odd_runs & ODD_BITS);
}

/* Check the JSON string whose body starts at p[i] (just past its opening quote) exactly as JSON.parse
 * reads it (valid UTF-8, no raw control character, only the eight escapes and \uXXXX, lone surrogate
 * escapes allowed): the index just past its closing quote and its JS length in *units_out, or -1.
 * 64 bytes at a time, from bit masks (escapes found as simdjson does); only escapes and non-ASCII
 * sequences are looked at one by one. The length is the bytes less the continuation
 * bytes, plus one per 4-byte sequence, less one per escape and four more per \uXXXX.
 * `lone` (or NULL): set when the string holds a lone surrogate escape. */
static INLINE Py_ssize_t check_string_in(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop, Py_ssize_t *units_out,
                                         int *lone) {
    if (i + 16 <= stop) { /* a short plain string (a key, an id) ends within its first 16 bytes */
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1F);
        int quotes = _mm_movemask_epi8(_mm_cmpeq_epi8(v, quote));
        int others = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, slash), _mm_cmpeq_epi8(_mm_max_epu8(v, control), control)))
                     | _mm_movemask_epi8(v);
        if (quotes && !(others & ((quotes & -quotes) - 1))) {
            Py_ssize_t length = __builtin_ctz(quotes);
            *units_out = length;
            return i + length + 1;
        }
    }
    Py_ssize_t units = 0, utf8_next = i; /* the first byte not inside an already checked UTF-8 sequence */
    Py_ssize_t high_end = -1;             /* for note_surrogate */
    uint64_t carried = 0;                 /* bit 0: this block's first byte is escaped */
    unsigned char padded[64];
    while (i < stop) {
        const unsigned char *block = p + i;
        if (stop - i < 64) { /* the last bytes, padded with spaces (plain characters) */
            memset(padded, ' ', 64);
            memcpy(padded, block, stop - i);
            block = padded;
        }
        Masks m;
        block_masks(block, &m);
        uint64_t starts = escape_starts(m.slash, carried);
        uint64_t escaped = (starts << 1) | carried;
        uint64_t ends = m.quote & ~escaped, inside = ~(uint64_t)0;
        Py_ssize_t bytes = 64;
        if (ends) {
            bytes = __builtin_ctzll(ends);
            inside = (((uint64_t)1) << bytes) - 1; /* bytes < 64 here */
        }
        escaped &= inside;
        starts &= inside;
        if (m.control & inside) return -1;
        Py_ssize_t u_escapes = 0;
        /* each escape checked by its character (in the next block when the backslash ends this one) */
        for (uint64_t named = escaped; named; named &= named - 1) {
            Py_ssize_t at = i + __builtin_ctzll(named) - 1; /* the backslash, maybe in the previous block */
            Py_ssize_t size = escape_length(p, at, stop);
            if (!size) return -1;
            u_escapes += size == 6;
            if (lone && size == 6) note_surrogate(p, at, &high_end, lone);
        }
        uint64_t high = m.high & inside;
        if (utf8_next > i) high &= utf8_next - i >= 64 ? 0 : ~((((uint64_t)1) << (utf8_next - i)) - 1);
        while (high) {
            Py_ssize_t at = i + __builtin_ctzll(high), size = utf8_sequence(p + at, stop - at);
            if (!size) return -1;
            utf8_next = at + size;
            Py_ssize_t past = utf8_next - i;
            high &= past >= 64 ? 0 : ~((((uint64_t)1) << past) - 1);
        }
        units += bytes - __builtin_popcountll(m.high & ~m.lead & inside) + __builtin_popcountll(m.four & inside)
                 - __builtin_popcountll(starts) - 4 * u_escapes;
        if (ends) {
            if (lone) note_surrogate(p, -1, &high_end, lone);
            *units_out = units;
            return i + bytes + 1;
        }
        carried = starts >> 63;
        i += 64;
    }
    return -1;
}
#else
/* Index of the first byte at or after p[i] that a JSON string body cannot pass over plainly. */
static INLINE Py_ssize_t next_special(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop) {
    for (; i < stop; i++) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return i;
    }
    return stop;
}

/* check_string without SSE2: byte by byte between the special bytes. */
static INLINE Py_ssize_t check_string_in(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop, Py_ssize_t *units_out,
                                         int *lone) {
    Py_ssize_t units = 0, high_end = -1;
    for (;;) {
        Py_ssize_t j = next_special(p, i, stop);
        units += j - i;
        i = j;
        if (i >= stop) return -1;
        unsigned char c = p[i];
        if (c == '"') break;
        if (c == '\\') {
            Py_ssize_t size = escape_length(p, i, stop);
            if (!size) return -1;
            if (lone && size == 6) note_surrogate(p, i, &high_end, lone);
            i += size;
            units += 1;
        } else if (c < 0x80) {
            return -1; /* a raw control character */
        } else {
            Py_ssize_t size = utf8_sequence(p + i, stop - i);
            if (!size) return -1;
            units += size == 4 ? 2 : 1;
            i += size;
        }
    }
    if (lone) note_surrogate(p, -1, &high_end, lone);
    *units_out = units;
    return i + 1;
}
#endif

DISPATCH_WITH(check_string, (const unsigned char *p, Py_ssize_t i, Py_ssize_t stop, Py_ssize_t *u, int *lone),
              (p, i, stop, u, lone))

typedef struct {
    Py_ssize_t start, end, units;
} Span;

/* The long strings one scan replaces: spans[0:count], `removed` bytes in all (their quotes kept). */
typedef struct {
    Span local[8], *spans;
    Py_ssize_t count, capacity, removed;
} Shortening;

static void shortening_init(Shortening *s) {
    s->spans = s->local, s->count = 0, s->capacity = 8, s->removed = 0;
}

static void shortening_free(Shortening *s) {
    if (s->spans != s->local) free(s->spans);
}

/* The shared pass of scan_line and scan_value over p[start:stop], without the GIL: every string checked
 * as JSON.parse reads it (and its UTF-8 with it), every byte outside strings ASCII, each string value
 * (a key never) of at least `shorten` bytes, quotes included, noted in `s`. `value`: stop at the end of
 * the value opening at p[start] (brackets are counted, not matched: whoever decodes the copy checks
 * them), its deepest nesting in *deepest; else scan to `stop`. `lone` (or NULL): set when a string holds
 * a lone surrogate escape. Returns where the scan ended, -1 when a check fails or the value does not
 * end before `stop`, -2 when out of memory. */
static Py_ssize_t scan_strings(const unsigned char *p, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t shorten,
                               int value, Shortening *s, Py_ssize_t *deepest, int *lone) {
    Py_ssize_t i = start, depth = 0;
    while (i < stop) {
        unsigned char c = p[i];
        if (c != '"') {
            if (c >= 0x80) return -1;
            if (value) {
                if (c == '{' || c == '[') {
                    if (++depth > *deepest) *deepest = depth;
                } else if ((c == '}' || c == ']') && --depth <= 0) {
                    return i + 1;
                }
            }
            i++;
            continue;
        }
        /* A token byte-identical to a long one already checked is that token again (a shell
         * display holds its output twice): compared, not scanned. */
        Py_ssize_t units = 0, end = -1;
        for (Py_ssize_t k = 0; k < s->count; k++) {
            Py_ssize_t size = s->spans[k].end - s->spans[k].start;
            if (i + size <= stop && p[i + size - 1] == '"' && !memcmp(p + i, p + s->spans[k].start, size)) {
                end = i + size;
                units = s->spans[k].units;
                break;
            }
        }
        if (end < 0) end = check_string(p, i + 1, stop, &units, lone);
        if (end < 0) return -1;
        if (end - i >= shorten) {
            Py_ssize_t k = end;
            while (k < stop && (p[k] == ' ' || p[k] == '\t' || p[k] == '\n' || p[k] == '\r')) k++;
            if (k >= stop || p[k] != ':') {
                if (s->count == s->capacity) {
                    Span *grown = malloc(sizeof(Span) * s->capacity * 2);
                    if (!grown) return -2;
                    memcpy(grown, s->spans, sizeof(Span) * s->count);
                    if (s->spans != s->local) free(s->spans);
                    s->spans = grown;
                    s->capacity *= 2;
                }
                s->spans[s->count].start = i;
                s->spans[s->count].end = end;
                s->spans[s->count].units = units;
                s->count++;
                s->removed += end - i - 2;
            }
        }
        i = end;
        if (value && depth == 0) return i; /* the value was this string */
    }
    return value ? -1 : stop;
}

/* (copy, spans) for p[start:stop] with the strings `s` noted replaced by "": each span is (position of
 * its "" in the copy, start, end, JS length), start and end being the token's place in the buffer. */
static PyObject *shortened_copy(const unsigned char *p, Py_ssize_t start, Py_ssize_t stop, Shortening *s) {
    PyObject *result = NULL;
    PyObject *copy = PyBytes_FromStringAndSize(NULL, stop - start - s->removed);
    PyObject *list = copy ? PyTuple_New(s->count) : NULL;
    if (list) {
        char *out = PyBytes_AS_STRING(copy);
        Py_ssize_t from = start, at = 0;
        for (Py_ssize_t k = 0; k < s->count; k++) {
            Span *span = &s->spans[k];
            memcpy(out + at, p + from, span->start - from);
            at += span->start - from;
            PyObject *item = Py_BuildValue("(nnnn)", at, span->start, span->end, span->units);
            if (!item) { Py_CLEAR(list); break; }
            PyTuple_SET_ITEM(list, k, item);
            out[at++] = '"';
            out[at++] = '"';
            from = span->end;
        }
        if (list) {
            memcpy(out + at, p + from, stop - from);
            result = Py_BuildValue("(OO)", copy, list);
            Py_DECREF(list);
        }
    }
    Py_XDECREF(copy);
    return result;
}

/* One pass over a JSON line buffer[start:stop] for a reader that decodes it with msgspec next:
 * every string checked as JSON.parse reads it (and its UTF-8 with it), every byte outside strings
 * ASCII (else the line is not JSON), and each string value of at least `shorten` bytes (its quotes
 * included; a key never) replaced by "" in a copy of the line, so that msgspec skips a few bytes
 * instead of the long text. Returns None when a check fails (the caller takes its exact path),
 * (None, ()) when nothing was replaced (decode the line itself), else (copy, spans) where each
 * span is (position of its "" in the copy, start, end, JS length), start and end being the
 * string token's place in the buffer. */
/* What scan_line returns for p[start:end] after scan_strings returned `end`. */
static PyObject *scan_result(const unsigned char *p, Py_ssize_t start, Py_ssize_t end, Shortening *s) {
    if (end == -2) return PyErr_NoMemory();
    if (end < 0) return Py_NewRef(Py_None);
    if (!s->count) return Py_BuildValue("(O())", Py_None);
    return shortened_copy(p, start, end, s);
}

static PyObject *scan_line(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, stop, shorten, end;
    if (!PyArg_ParseTuple(args, "y*nnn", &view, &start, &stop, &shorten)) return NULL;
    const unsigned char *p = view.buf;
    if (stop > view.len) stop = view.len;
    if (start < 0) start = 0;
    Shortening s;
    shortening_init(&s);
    Py_BEGIN_ALLOW_THREADS
    end = scan_strings(p, start, stop, shorten, 0, &s, NULL, NULL);
    Py_END_ALLOW_THREADS
    PyObject *result = scan_result(p, start, end, &s);
    shortening_free(&s);
    PyBuffer_Release(&view);
    return result;
}

/* scan_line for the one JSON value (an object, an array or a string) opening at buffer[start], for a
 * reader that walks a document value by value (a JSON Lines record, a legacy document's message):
 * None when a check fails or the value does not end before `stop`, else (end, copy, spans, deepest,
 * lone): `end` just past the value, `copy` and `spans` as scan_line's for buffer[start:end] (None and
 * () when nothing was replaced), `deepest` its nesting (brackets), `lone` whether a string holds a lone
 * surrogate escape (orjson refuses those: the caller then decodes as its exact path does). */
static PyObject *scan_value(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, stop, shorten, end = -1, deepest = 0;
    int lone = 0;
    if (!PyArg_ParseTuple(args, "y*nnn", &view, &start, &stop, &shorten)) return NULL;
    const unsigned char *p = view.buf;
    if (stop > view.len) stop = view.len;
    Shortening s;
    shortening_init(&s);
    if (start >= 0 && start < stop && (p[start] == '{' || p[start] == '[' || p[start] == '"')) {
        Py_BEGIN_ALLOW_THREADS
        end = scan_strings(p, start, stop, shorten, 1, &s, &deepest, &lone);
        Py_END_ALLOW_THREADS
    }
    PyObject *result = scan_result(p, start, end, &s);
    if (result != NULL && result != Py_None) {
        PyObject *scanned = result;
        result = Py_BuildValue("(nOOnO)", end, PyTuple_GET_ITEM(scanned, 0), PyTuple_GET_ITEM(scanned, 1), deepest,
                               lone ? Py_True : Py_False);
        Py_DECREF(scanned);
    }
    shortening_free(&s);
    PyBuffer_Release(&view);
    return result;
}

/* The JS lengths of the string values in a valid JSON value (keys left out), summed: what a walk
 * adding `.length` of every string that is not a key would give. Trusts its input as the counters
 * above do (msgspec accepted the JSON, valid_utf8 the bytes); None when a string does not end. */
static PyObject *text_units(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *p = view.buf;
    Py_ssize_t n = view.len, i = 0, total = 0;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (;;) {
        const unsigned char *q = memchr(p + i, '"', n - i);
        if (q == NULL) break;
        Py_ssize_t units = 0, end = scan_string(p, q - p + 1, n, &units);
        if (end < 0) { ok = 0; break; }
        i = end;
        while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
        if (i >= n || p[i] != ':') total += units; /* a key is followed by its colon */
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (!ok) Py_RETURN_NONE;
    return PyLong_FromSsize_t(total);
}

/* Where `inner`'s bytes start within `outer`'s (both buffers), or -1 when they are not inside it:
 * msgspec.Raw values decoded from a view share its memory, so this is their exact position. */
static PyObject *offset_in(PyObject *self, PyObject *args) {
    PyObject *inner_obj, *outer_obj;
    if (!PyArg_ParseTuple(args, "OO", &inner_obj, &outer_obj)) return NULL;
    Py_buffer inner, outer;
    if (PyObject_GetBuffer(inner_obj, &inner, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(outer_obj, &outer, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&inner);
        return NULL;
    }
    const char *a = inner.buf, *b = outer.buf;
    Py_ssize_t offset = -1;
    if (a >= b && a + inner.len <= b + outer.len) offset = a - b;
    PyBuffer_Release(&inner);
    PyBuffer_Release(&outer);
    return PyLong_FromSsize_t(offset);
}

static PyMethodDef methods[] = {
    {"scan_line", scan_line, METH_VARARGS,
     "Check a JSON line's strings and shorten its long string values: None, (None, ()) or (copy, spans)."},
    {"scan_value", scan_value, METH_VARARGS,
     "scan_line for the JSON value opening at buffer[start]: None or (end, copy, spans, deepest, lone)."},
    {"offset_in", offset_in, METH_VARARGS, "Where inner's memory starts within outer's, or -1."},
    {"string_span", string_span, METH_VARARGS,
     "(end, JS length) of the valid JSON string token at buffer[start], within buffer[:stop]; None if none."},
    {"valid_utf8", valid_utf8, METH_O, "True when the buffer is valid UTF-8 (strict, as bytes.decode)."},
    {"string_units", string_units, METH_O,
     "JS length of the valid JSON string token in the buffer (quotes included), or None when it is not one."},
    {"fast_decodable", fast_decodable, METH_O,
     "valid_utf8, and no run of 309 or more ASCII digits (a number only msgspec accepts)."},
    {"text_units", text_units, METH_O,
     "Sum of the JS lengths of the string values (not keys) in the valid JSON value in the buffer."},
    {"string_units", string_units, METH_O,
     "JS length of the valid JSON string token in the buffer (quotes included), or None when it is not one."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rawjson", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rawjson(void) {
    const char *simple = "\"\\/bfnrt";
    for (const char *c = simple; *c; c++) escape_kind[(unsigned char)*c] = 1;
    escape_kind['u'] = 'u';
    PICK(scan_string);
    PICK(check_string);
    return PyModule_Create(&module);
}
