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
#define DISPATCH(name, params, args)                                                         \
    static Py_ssize_t name##_generic params { return name##_in args; }                      \
    __attribute__((target("popcnt"))) static Py_ssize_t name##_popcnt params {               \
        return name##_in args;                                                               \
    }                                                                                        \
    static Py_ssize_t(*name) params = name##_generic;
#define PICK(name) \
    if (__builtin_cpu_supports("popcnt")) name = name##_popcnt
#else
#define DISPATCH(name, params, args) \
    static Py_ssize_t name params { return name##_in args; }
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

/* `text.length` in JavaScript for a Python str: its code points, plus one for each astral one
   (two UTF-16 units). Only a 4-byte-kind string can hold an astral code point; a lone
   surrogate stored in one counts 1, as in JavaScript. */
static PyObject *utf16_length(PyObject *self, PyObject *arg) {
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "utf16_length takes a str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg), units = n;
    if (PyUnicode_KIND(arg) == PyUnicode_4BYTE_KIND) {
        const Py_UCS4 *p = PyUnicode_4BYTE_DATA(arg);
        Py_ssize_t astral = 0;
        for (Py_ssize_t i = 0; i < n; i++) astral += p[i] > 0xFFFF;
        units += astral;
    }
    return PyLong_FromSsize_t(units);
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

DISPATCH(scan_string, (const unsigned char *p, Py_ssize_t i, Py_ssize_t stop, Py_ssize_t *u), (p, i, stop, u))

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

/* Check the escape whose backslash is at p[i]: the bytes it takes (2 or 6), or 0 when invalid. */
static INLINE Py_ssize_t escape_length(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop) {
    if (i + 1 >= stop) return 0;
    unsigned char kind = escape_kind[p[i + 1]];
    if (kind == 1) return 2;
    if (kind == 'u' && i + 6 <= stop && is_hex(p[i + 2]) && is_hex(p[i + 3]) && is_hex(p[i + 4]) && is_hex(p[i + 5]))
        return 6;
    return 0;
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

#if defined(__SSE2__)
#include <immintrin.h>

typedef struct {
    uint64_t quote, slash, control, high, lead, four;
} Masks;

/* Each SIMD helper comes twice: for SSE2 (every x86-64 CPU) and for AVX2, compiled for that target
 * and picked at import (PICK) when the CPU has it. The string check below takes `avx2` as a constant,
 * so each compiled variant of the scan keeps one kind. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_AVX2 1
#define AVX2_TARGET __attribute__((target("avx2,popcnt")))
#else
#define HAVE_AVX2 0
#endif

#define MOVEMASK16(v) ((uint64_t)(uint16_t)_mm_movemask_epi8(v))

/* One bit per byte of p[0:64]: quotes, backslashes, control characters, bytes >= 0x80, and only
 * when there is a byte >= 0x80: bytes >= 0xC0 and >= 0xF0. */
static INLINE void block_masks_sse2(const unsigned char *p, Masks *m) {
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1F);
    __m128i v[4];
    uint64_t q = 0, b = 0, c = 0, h = 0;
    for (int k = 0; k < 4; k++) {
        v[k] = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        int shift = 16 * k;
        q |= MOVEMASK16(_mm_cmpeq_epi8(v[k], quote)) << shift;
        b |= MOVEMASK16(_mm_cmpeq_epi8(v[k], slash)) << shift;
        c |= MOVEMASK16(_mm_cmpeq_epi8(_mm_max_epu8(v[k], control), control)) << shift;
        h |= MOVEMASK16(v[k]) << shift;
    }
    m->quote = q, m->slash = b, m->control = c, m->high = h, m->lead = 0, m->four = 0;
    if (h) {
        const __m128i lead = _mm_set1_epi8((char)0xC0), four = _mm_set1_epi8((char)0xF0);
        uint64_t l = 0, f = 0;
        for (int k = 0; k < 4; k++) {
            int shift = 16 * k;
            l |= MOVEMASK16(_mm_cmpeq_epi8(_mm_max_epu8(v[k], lead), v[k])) << shift;
            f |= MOVEMASK16(_mm_cmpeq_epi8(_mm_max_epu8(v[k], four), v[k])) << shift;
        }
        m->lead = l, m->four = f;
    }
}

/* One bit per byte of p[0:64] that may follow a backslash in a JSON string: " \ / b f n r t u. */
static INLINE uint64_t escape_char_mask_sse2(const unsigned char *p) {
    static const char named[] = "\"\\/bfnrtu";
    uint64_t mask = 0;
    for (int k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * k)), hit = _mm_setzero_si128();
        for (int j = 0; j < 9; j++) hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, _mm_set1_epi8(named[j])));
        mask |= MOVEMASK16(hit) << (16 * k);
    }
    return mask;
}

/* One bit per byte of p[0:64] that is 'u'. */
static INLINE uint64_t u_mask_sse2(const unsigned char *p) {
    uint64_t mask = 0;
    for (int k = 0; k < 4; k++)
        mask |= MOVEMASK16(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * k)), _mm_set1_epi8('u')))
                << (16 * k);
    return mask;
}

/* The length of the string body at p[0:16] when its closing quote comes before any backslash,
 * control character or byte >= 0x80 there (a key, an id): its JS length too; else -1. */
static INLINE Py_ssize_t plain_prefix_sse2(const unsigned char *p) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1F);
    int quotes = _mm_movemask_epi8(_mm_cmpeq_epi8(v, quote));
    int others = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, slash), _mm_cmpeq_epi8(_mm_max_epu8(v, control), control)))
                 | _mm_movemask_epi8(v);
    return quotes && !(others & ((quotes & -quotes) - 1)) ? __builtin_ctz(quotes) : -1;
}

#if HAVE_AVX2
#define MOVEMASK32(v) ((uint64_t)(uint32_t)_mm256_movemask_epi8(v))

AVX2_TARGET static void block_masks_avx2(const unsigned char *p, Masks *m) {
    const __m256i quote = _mm256_set1_epi8('"'), slash = _mm256_set1_epi8('\\'), control = _mm256_set1_epi8(0x1F);
    __m256i a = _mm256_loadu_si256((const __m256i *)p), b = _mm256_loadu_si256((const __m256i *)(p + 32));
    m->quote = MOVEMASK32(_mm256_cmpeq_epi8(a, quote)) | MOVEMASK32(_mm256_cmpeq_epi8(b, quote)) << 32;
    m->slash = MOVEMASK32(_mm256_cmpeq_epi8(a, slash)) | MOVEMASK32(_mm256_cmpeq_epi8(b, slash)) << 32;
    m->control = MOVEMASK32(_mm256_cmpeq_epi8(_mm256_max_epu8(a, control), control))
                 | MOVEMASK32(_mm256_cmpeq_epi8(_mm256_max_epu8(b, control), control)) << 32;
    m->high = MOVEMASK32(a) | MOVEMASK32(b) << 32;
    m->lead = m->four = 0;
    if (m->high) {
        const __m256i lead = _mm256_set1_epi8((char)0xC0), four = _mm256_set1_epi8((char)0xF0);
        m->lead = MOVEMASK32(_mm256_cmpeq_epi8(_mm256_max_epu8(a, lead), a))
                  | MOVEMASK32(_mm256_cmpeq_epi8(_mm256_max_epu8(b, lead), b)) << 32;
        m->four = MOVEMASK32(_mm256_cmpeq_epi8(_mm256_max_epu8(a, four), a))
                  | MOVEMASK32(_mm256_cmpeq_epi8(_mm256_max_epu8(b, four), b)) << 32;
    }
}

/* escape_char_mask_sse2 from two table lookups: each of " / \ b f n r t u is the only byte whose
 * high nibble's bit (0x20: 1, 0x50: 2, 0x60: 4, 0x70: 8) is among its low nibble's bits. */
AVX2_TARGET static uint64_t escape_char_mask_avx2(const unsigned char *p) {
    const __m256i by_low = _mm256_setr_epi8(0, 0, 0x0D, 0, 0x08, 0x08, 0x04, 0, 0, 0, 0, 0, 0x02, 0, 0x04, 0x01,
                                            0, 0, 0x0D, 0, 0x08, 0x08, 0x04, 0, 0, 0, 0, 0, 0x02, 0, 0x04, 0x01);
    const __m256i by_high = _mm256_setr_epi8(0, 0, 0x01, 0, 0, 0x02, 0x04, 0x08, 0, 0, 0, 0, 0, 0, 0, 0,
                                             0, 0, 0x01, 0, 0, 0x02, 0x04, 0x08, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i nibble = _mm256_set1_epi8(0x0F), zero = _mm256_setzero_si256();
    uint64_t invalid = 0;
    for (int k = 0; k < 2; k++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + 32 * k));
        __m256i low = _mm256_shuffle_epi8(by_low, _mm256_and_si256(v, nibble));
        __m256i high = _mm256_shuffle_epi8(by_high, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble));
        invalid |= MOVEMASK32(_mm256_cmpeq_epi8(_mm256_and_si256(low, high), zero)) << (32 * k);
    }
    return ~invalid;
}

AVX2_TARGET static uint64_t u_mask_avx2(const unsigned char *p) {
    const __m256i u = _mm256_set1_epi8('u');
    return MOVEMASK32(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)p), u))
           | MOVEMASK32(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + 32)), u)) << 32;
}

AVX2_TARGET static Py_ssize_t plain_prefix_avx2(const unsigned char *p) {
    __m256i v = _mm256_loadu_si256((const __m256i *)p);
    const __m256i quote = _mm256_set1_epi8('"'), slash = _mm256_set1_epi8('\\'), control = _mm256_set1_epi8(0x1F);
    uint32_t quotes = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, quote));
    __m256i controls = _mm256_cmpeq_epi8(_mm256_max_epu8(v, control), control);
    __m256i special = _mm256_or_si256(_mm256_cmpeq_epi8(v, slash), controls);
    uint32_t others = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(special, v));
    return quotes && !(others & ((quotes & -quotes) - 1)) ? __builtin_ctz(quotes) : -1;
}
#define PICK_SIMD(name, sse2_args, avx2_args) (avx2 ? name##_avx2 avx2_args : name##_sse2 sse2_args)
#else
#define PICK_SIMD(name, sse2_args, avx2_args) (name##_sse2 sse2_args)
#endif

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
 * 64 bytes at a time, from bit masks (escapes found as simdjson does, their characters checked
 * from a mask too); only \uXXXX escapes and non-ASCII sequences are looked at one by one. The
 * length is the bytes less the continuation bytes, plus one per 4-byte sequence, less one per
 * escape and four more per \uXXXX. `lone` (or NULL): set when the string holds a lone surrogate
 * escape. `avx2`: a constant, which SIMD helpers to use. */
static INLINE Py_ssize_t check_string_in(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop, Py_ssize_t *units_out,
                                         int *lone, const int avx2) {
    if (i + (avx2 ? 32 : 16) <= stop) { /* a short plain string (a key, an id) ends within its first 16 or 32 bytes */
        Py_ssize_t length = PICK_SIMD(plain_prefix, (p + i), (p + i));
        if (length >= 0) {
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
        PICK_SIMD(block_masks, (block, &m), (block, &m));
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
        if (escaped) { /* each escaped character (bit 0: escaped by the previous block's last backslash) */
            if (escaped & ~PICK_SIMD(escape_char_mask, (block), (block))) return -1;
            for (uint64_t hex_escapes = escaped & PICK_SIMD(u_mask, (block), (block)); hex_escapes;
                 hex_escapes &= hex_escapes - 1) {
                Py_ssize_t at = i + __builtin_ctzll(hex_escapes) - 1; /* the backslash, maybe in the previous block */
                if (escape_length(p, at, stop) != 6) return -1;
                u_escapes++;
                if (lone) note_surrogate(p, at, &high_end, lone);
            }
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
#define HAVE_AVX2 0
static INLINE Py_ssize_t check_string_in(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop, Py_ssize_t *units_out,
                                         int *lone, const int avx2) {
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


typedef struct {
    Py_ssize_t start, end, units, at; /* the token's place and JS length; `at`: its "" in the copy */
} Span;

/* The long strings a scan found: a growable array that starts in `local`. */
typedef struct {
    Span *items, local[8];
    Py_ssize_t count, capacity;
} SpanList;

static void spans_init(SpanList *spans) {
    spans->items = spans->local, spans->count = 0, spans->capacity = 8;
}

static void spans_free(SpanList *spans) {
    if (spans->items != spans->local) free(spans->items);
}

static int spans_add(SpanList *spans, Py_ssize_t start, Py_ssize_t end, Py_ssize_t units) {
    if (spans->count == spans->capacity) {
        Span *grown = malloc(sizeof(Span) * spans->capacity * 2);
        if (!grown) return 0;
        memcpy(grown, spans->items, sizeof(Span) * spans->count);
        spans_free(spans);
        spans->items = grown, spans->capacity *= 2;
    }
    Span *span = &spans->items[spans->count++];
    span->start = start, span->end = end, span->units = units, span->at = -1;
    return 1;
}

/* Nesting deeper than this makes scan_record give up: orjson refuses more than 1024 levels, msgspec fewer. */
#define RECORD_MAX_DEPTH 256
/* A run of this many digits may be a number orjson refuses as infinite (1e308 is 309 digits long). */
#define RECORD_MAX_DIGITS 300

/* Which of 64 bits the eight bytes after the quote at p[0] hash to. */
static INLINE int head_bit(const unsigned char *p) {
    return (int)((load8(p + 1) * 0x9E3779B97F4A7C15ULL) >> 58);
}

/* What a scan checks besides every string, and where it stops. */
enum {
    SCAN_LINE,   /* to `stop`; every byte outside strings ASCII */
    SCAN_VALUE,  /* to the end of the value opening at `start` (brackets counted, not matched: whoever
                    decodes the copy checks them); its deepest nesting in *deepest */
    SCAN_RECORD, /* SCAN_LINE, failing also where msgspec and orjson could read the line differently:
                    a lone surrogate escape, a number with an exponent or of RECORD_MAX_DIGITS digits,
                    nesting deeper than RECORD_MAX_DEPTH; and where the line is not one object or array
                    (brackets counted, not matched; see scan_record) */
};

/* The shared pass of the scans over p[start:stop], without the GIL: every string checked as JSON.parse
 * reads it (and its UTF-8 with it), every byte outside strings ASCII, each string value (a key never)
 * of at least `shorten` bytes, quotes included, added to `list` and its bytes less its quotes to
 * *removed. `lone` (or NULL): set when a string holds a lone surrogate escape. Returns where the scan
 * ended, -1 when a check fails (or a value does not end before `stop`), -2 when out of memory. */
static INLINE Py_ssize_t scan_strings_in(const unsigned char *p, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t shorten,
                                         int mode, SpanList *list, Py_ssize_t *removed, Py_ssize_t *deepest, int *lone,
                                         const int avx2) {
    Py_ssize_t first = list->count, digits = 0, depth = 0, i = start;
    int closed = 0; /* SCAN_RECORD: the line's value has ended */
    uint64_t heads = 0;
    while (i < stop) {
        unsigned char c = p[i];
        if (c != '"') {
            if (c >= 0x80) return -1;
            if (mode == SCAN_VALUE) {
                if (c == '{' || c == '[') {
                    if (++depth > *deepest) *deepest = depth;
                } else if ((c == '}' || c == ']') && --depth <= 0) {
                    return i + 1;
                }
            } else if (mode == SCAN_RECORD) {
                if (depth == 0) {
                    /* Outside the line's one value: whitespace, and its opening bracket once. Anything else
                     * (a second value, a bare scalar, a bracket too many) and msgspec's decode_lines, which
                     * reads a stream of values and not of lines, would give this line's neighbours the
                     * wrong records. */
                    if (c == '{' || c == '[') {
                        if (closed) return -1;
                        depth = 1;
                    } else if (c != ' ' && c != '\t' && c != '\r') {
                        return -1;
                    }
                } else if (c >= '0' && c <= '9') {
                    if (++digits >= RECORD_MAX_DIGITS) return -1;
                } else {
                    if ((c | 0x20) == 'e' && digits) return -1; /* an exponent ("true" has no digit before) */
                    digits = 0;
                    if (c == '{' || c == '[') {
                        if (++depth > RECORD_MAX_DEPTH) return -1;
                    } else if ((c == '}' || c == ']') && --depth == 0) {
                        closed = 1;
                    }
                }
            }
            i++;
            continue;
        }
        digits = 0;
        if (mode == SCAN_RECORD && depth == 0) return -1; /* a string outside the line's one value */
        /* A token byte-identical to a long one already checked is that token again (a shell
         * display holds its output twice): compared, not scanned. Only tokens whose first bytes
         * hash to a bit of `heads` are compared (the bits of the long tokens' first bytes). */
        Py_ssize_t units = 0, end = -1;
        int may_repeat = list->count > first && (i + 9 > stop || (heads >> head_bit(p + i) & 1));
        for (Py_ssize_t k = first; may_repeat && k < list->count; k++) {
            const Span *seen = &list->items[k];
            Py_ssize_t size = seen->end - seen->start;
            if (i + size <= stop && p[i + size - 1] == '"' && !memcmp(p + i, p + seen->start, size)) {
                end = i + size;
                units = seen->units;
                break;
            }
        }
        if (end < 0) end = check_string_in(p, i + 1, stop, &units, lone, avx2);
        if (end < 0 || (mode == SCAN_RECORD && *lone)) return -1;
        if (end - i >= shorten) {
            Py_ssize_t k = end;
            while (k < stop && (p[k] == ' ' || p[k] == '\t' || p[k] == '\n' || p[k] == '\r')) k++;
            if (k >= stop || p[k] != ':') {
                if (!spans_add(list, i, end, units)) return -2;
                if (i + 9 <= stop) heads |= (uint64_t)1 << head_bit(p + i);
                *removed += end - i - 2;
            }
        }
        i = end;
        if (mode == SCAN_VALUE && depth == 0) return i; /* the value was this string */
    }
    if (mode == SCAN_VALUE || (mode == SCAN_RECORD && (depth || !closed))) return -1; /* unclosed, or no value */
    return stop;
}

#define SCAN_STRINGS_PARAMS                                                                                  \
    (const unsigned char *p, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t shorten, int mode, SpanList *list, \
     Py_ssize_t *removed, Py_ssize_t *deepest, int *lone)
DISPATCH(scan_strings, SCAN_STRINGS_PARAMS, (p, start, stop, shorten, mode, list, removed, deepest, lone, 0))
#if HAVE_AVX2
/* flatten: the AVX2 helpers are inlined, as only a function compiled for AVX2 may */
__attribute__((flatten)) AVX2_TARGET static Py_ssize_t scan_strings_avx2 SCAN_STRINGS_PARAMS {
    return scan_strings_in(p, start, stop, shorten, mode, list, removed, deepest, lone, 1);
}
#endif

/* Write p[from:to] to out with the spans list->items[first:] (all within it) as "", noting each
 * one's place in out (`at`, counted from `base`); returns the bytes written. */
static Py_ssize_t write_shortened(char *out, Py_ssize_t base, const unsigned char *p, Py_ssize_t from, Py_ssize_t to,
                                  SpanList *list, Py_ssize_t first) {
    Py_ssize_t at = 0;
    for (Py_ssize_t k = first; k < list->count; k++) {
        Span *span = &list->items[k];
        memcpy(out + at, p + from, span->start - from);
        at += span->start - from;
        span->at = base + at;
        out[at++] = '"';
        out[at++] = '"';
        from = span->end;
    }
    memcpy(out + at, p + from, to - from);
    return at + to - from;
}

/* The spans as a tuple of (position of the "" in the copy, start, end, JS length). */
static PyObject *spans_tuple(const SpanList *list) {
    PyObject *tuple = PyTuple_New(list->count);
    for (Py_ssize_t k = 0; tuple && k < list->count; k++) {
        const Span *span = &list->items[k];
        PyObject *item = Py_BuildValue("(nnnn)", span->at, span->start, span->end, span->units);
        if (!item) Py_CLEAR(tuple);
        else PyTuple_SET_ITEM(tuple, k, item);
    }
    return tuple;
}

/* The (buffer, start, stop, shorten) every scan takes, clamped so that 0 <= start <= stop <= len(buffer)
 * (scan_records sizes its copy from stop - start). */
static int parse_scan_args(PyObject *args, Py_buffer *view, Py_ssize_t *start, Py_ssize_t *stop, Py_ssize_t *shorten) {
    if (!PyArg_ParseTuple(args, "y*nnn", view, start, stop, shorten)) return 0;
    if (*stop > view->len) *stop = view->len;
    if (*stop < 0) *stop = 0;
    if (*start < 0) *start = 0;
    if (*start > *stop) *start = *stop;
    return 1;
}

/* What scan_line returns for p[start:end] after scan_strings returned `end` (and noted `spans`,
 * `removed` bytes less): None when a check failed, (None, ()) when nothing was replaced, else
 * (copy, spans), each span (position of its "" in the copy, start, end, JS length). */
static PyObject *scan_result(const unsigned char *p, Py_ssize_t start, Py_ssize_t end, SpanList *spans,
                             Py_ssize_t removed) {
    if (end == -2) return PyErr_NoMemory();
    if (end < 0) return Py_NewRef(Py_None);
    if (!spans->count) return Py_BuildValue("(O())", Py_None);
    PyObject *copy = PyBytes_FromStringAndSize(NULL, end - start - removed);
    if (!copy) return NULL;
    write_shortened(PyBytes_AS_STRING(copy), 0, p, start, end, spans, 0);
    PyObject *tuple = spans_tuple(spans);
    if (!tuple) {
        Py_DECREF(copy);
        return NULL;
    }
    return Py_BuildValue("(NN)", copy, tuple);
}

/* scan_line and scan_record: a scan of the line buffer[start:stop] in `mode`. */
static PyObject *shortened_line(PyObject *args, int mode) {
    Py_buffer view;
    Py_ssize_t start, stop, shorten, removed = 0, end;
    if (!parse_scan_args(args, &view, &start, &stop, &shorten)) return NULL;
    const unsigned char *p = view.buf;
    SpanList spans;
    spans_init(&spans);
    int lone = 0;
    Py_BEGIN_ALLOW_THREADS
    end = scan_strings(p, start, stop, shorten, mode, &spans, &removed, NULL, mode == SCAN_RECORD ? &lone : NULL);
    Py_END_ALLOW_THREADS
    PyObject *result = scan_result(p, start, end, &spans, removed);
    spans_free(&spans);
    PyBuffer_Release(&view);
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
static PyObject *scan_line(PyObject *self, PyObject *args) {
    return shortened_line(args, SCAN_LINE);
}

/* scan_line for a reader that decodes the copy with msgspec and some values of the line with orjson,
 * and must get what orjson decoding the whole line gives: None also where the two decoders part or
 * orjson would refuse the whole line: a lone surrogate escape (both refuse it: the exact path's
 * stdlib keeps it), a number with an exponent or RECORD_MAX_DIGITS digits in a row (orjson refuses
 * those beyond the double range, msgspec accepts them), nesting deeper than RECORD_MAX_DEPTH; and
 * where the line is not exactly one object or array (blank, a bare scalar, two values glued, one
 * left open): scan_records' copy of lines goes to decode_lines, which reads a stream of values. */
static PyObject *scan_record(PyObject *self, PyObject *args) {
    return shortened_line(args, SCAN_RECORD);
}

/* scan_line for the one JSON value (an object, an array or a string) opening at buffer[start], for a
 * reader that walks a document value by value (a JSON Lines record, a legacy document's message):
 * None when a check fails or the value does not end before `stop`, else (end, copy, spans, deepest,
 * lone): `end` just past the value, `copy` and `spans` as scan_line's for buffer[start:end] (None and
 * () when nothing was replaced), `deepest` its nesting (brackets), `lone` whether a string holds a lone
 * surrogate escape (orjson refuses those: the caller then decodes as its exact path does). */
static PyObject *scan_value(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, stop, shorten, end = -1, deepest = 0, removed = 0;
    int lone = 0;
    if (!PyArg_ParseTuple(args, "y*nnn", &view, &start, &stop, &shorten)) return NULL;
    const unsigned char *p = view.buf;
    if (stop > view.len) stop = view.len;
    SpanList spans;
    spans_init(&spans);
    if (start >= 0 && start < stop && (p[start] == '{' || p[start] == '[' || p[start] == '"')) {
        Py_BEGIN_ALLOW_THREADS
        end = scan_strings(p, start, stop, shorten, SCAN_VALUE, &spans, &removed, &deepest, &lone);
        Py_END_ALLOW_THREADS
    }
    PyObject *result = scan_result(p, start, end, &spans, removed);
    if (result != NULL && result != Py_None) {
        PyObject *scanned = result;
        result = Py_BuildValue("(nOOnO)", end, PyTuple_GET_ITEM(scanned, 0), PyTuple_GET_ITEM(scanned, 1), deepest,
                               lone ? Py_True : Py_False);
        Py_DECREF(scanned);
    }
    spans_free(&spans);
    PyBuffer_Release(&view);
    return result;
}

/* A growable malloc'ed buffer. */
typedef struct {
    char *data;
    Py_ssize_t size, capacity;
} Growing;

/* Room for `more` bytes at data + size; 0 when memory ran out. */
static int grow(Growing *out, Py_ssize_t more) {
    if (out->size + more <= out->capacity) return 1;
    Py_ssize_t capacity = out->capacity * 2 > out->size + more ? out->capacity * 2 : out->size + more + 4096;
    char *data = realloc(out->data, capacity);
    if (!data) return 0;
    out->data = data, out->capacity = capacity;
    return 1;
}

/* A line of nothing but JSON whitespace (or nothing). */
static int blank(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop) {
    for (; i < stop; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') return 0;
    return 1;
}

/* scan_record over every line of buffer[start:stop] (lines end at "\n"; the last may not), for a
 * reader that decodes them all with one msgspec decode_lines call: (copy, spans, table). The copy
 * holds one line per line, shortened as scan_record shortens it, or `null` for a line scan_record
 * refuses or that is blank (the reader's exact path reads those). spans are scan_record's, their
 * positions in the copy. table holds three Py_ssize_t per line, and three more after the last:
 * where the line ends in the buffer (its "\n", or stop), where it starts in the copy, and the index
 * of its first span (the row after the last: stop, the copy's size, the number of spans). */
static PyObject *scan_records(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, stop, shorten;
    if (!parse_scan_args(args, &view, &start, &stop, &shorten)) return NULL;
    const unsigned char *p = view.buf;
    SpanList spans;
    spans_init(&spans);
    Growing copy = {NULL, 0, 0}, table = {NULL, 0, 0};
    int ok = grow(&copy, (stop - start) / 2 + 64) && grow(&table, 4096);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t line = start; ok && line < stop;) {
        const unsigned char *newline = memchr(p + line, '\n', stop - line);
        Py_ssize_t end = newline ? newline - p : stop, first = spans.count, removed = 0;
        Py_ssize_t row[3] = {end, copy.size, first};
        int lone = 0;
        Py_ssize_t scanned = scan_strings(p, line, end, shorten, SCAN_RECORD, &spans, &removed, NULL, &lone);
        Py_ssize_t written = end - line - removed > 4 ? end - line - removed : 4; /* the short line, or null */
        if (scanned == -2 || !grow(&table, sizeof(row)) || !grow(&copy, written + 1)) {
            ok = 0;
            break;
        }
        memcpy(table.data + table.size, row, sizeof(row));
        table.size += sizeof(row);
        if (scanned < 0 || blank(p, line, end)) {
            spans.count = first;
            memcpy(copy.data + copy.size, "null", 4);
            copy.size += 4;
        } else {
            copy.size += write_shortened(copy.data + copy.size, copy.size, p, line, end, &spans, first);
        }
        copy.data[copy.size++] = '\n';
        line = end + 1;
    }
    Py_ssize_t last[3] = {stop, copy.size, spans.count};
    if (ok && grow(&table, sizeof(last))) {
        memcpy(table.data + table.size, last, sizeof(last));
        table.size += sizeof(last);
    } else {
        ok = 0;
    }
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (!ok) {
        PyErr_NoMemory();
    } else {
        PyObject *tuple = spans_tuple(&spans);
        if (tuple) result = Py_BuildValue("(y#Ny#)", copy.data, copy.size, tuple, table.data, table.size);
    }
    free(copy.data);
    free(table.data);
    spans_free(&spans);
    PyBuffer_Release(&view);
    return result;
}

/* The keys met so far in a value, one 64-bit hash of (object, key bytes) each, in an open-addressing
 * table that starts in `local` and doubles (malloc) at half full: a key seen twice in one object is a
 * value JSON.parse keeps only once. */
typedef struct {
    uint64_t *slots, local[64];
    Py_ssize_t capacity, used;
} KeySet;

static void keys_init(KeySet *keys) {
    memset(keys->local, 0, sizeof(keys->local));
    keys->slots = keys->local, keys->capacity = 64, keys->used = 0;
}

static void keys_free(KeySet *keys) {
    if (keys->slots != keys->local) free(keys->slots);
}

static void keys_put(uint64_t *slots, Py_ssize_t capacity, uint64_t hash) {
    Py_ssize_t k = (Py_ssize_t)(hash & (uint64_t)(capacity - 1));
    while (slots[k]) k = (k + 1) & (capacity - 1);
    slots[k] = hash;
}

/* Add a key's hash: 1 when new, 0 when already there (a repeated key, or once in 2^64 a collision:
 * either way the caller gives up), -1 when memory ran out. */
static int keys_add(KeySet *keys, uint64_t hash) {
    hash |= 1; /* 0 marks an empty slot */
    Py_ssize_t k = (Py_ssize_t)(hash & (uint64_t)(keys->capacity - 1));
    for (; keys->slots[k]; k = (k + 1) & (keys->capacity - 1))
        if (keys->slots[k] == hash) return 0;
    keys->slots[k] = hash;
    if (++keys->used * 2 < keys->capacity) return 1;
    uint64_t *grown = calloc(keys->capacity * 2, sizeof(uint64_t));
    if (!grown) return -1;
    for (Py_ssize_t j = 0; j < keys->capacity; j++)
        if (keys->slots[j]) keys_put(grown, keys->capacity * 2, keys->slots[j]);
    keys_free(keys);
    keys->slots = grown, keys->capacity *= 2;
    return 1;
}

/* FNV-1a of a key's bytes, seeded with the number of the object holding it. */
static uint64_t key_hash(const unsigned char *p, Py_ssize_t n, uint64_t object) {
    uint64_t hash = 14695981039346656037ULL ^ (object * 0x9E3779B97F4A7C15ULL);
    for (Py_ssize_t i = 0; i < n; i++) hash = (hash ^ p[i]) * 1099511628211ULL;
    return hash;
}

#define TEXT_MAX_DEPTH 1024

/* The JS lengths of the string values in p[0:n], a valid JSON value (keys left out), summed into
 * *total, as a walk of the decoded value would add them: 1 when counted, 0 when the count could
 * differ from that walk's (an object holding a key twice, whose first value the decoded object
 * drops; a key written with an escape, which could repeat another; a string that does not end;
 * nesting deeper than TEXT_MAX_DEPTH), -1 when memory ran out. Trusts its input as the counters
 * above do. */
static int count_text_units(const unsigned char *p, Py_ssize_t n, Py_ssize_t *total) {
    uint64_t objects[TEXT_MAX_DEPTH], next_object = 0; /* the open objects, innermost last */
    Py_ssize_t depth = 0, i = 0;
    KeySet keys;
    keys_init(&keys);
    int ok = 1;
    while (ok == 1) {
        for (; i < n && p[i] != '"'; i++) {
            if (p[i] == '{') {
                if (depth == TEXT_MAX_DEPTH) { ok = 0; break; }
                objects[depth++] = ++next_object;
            } else if (p[i] == '}' && depth) {
                depth--;
            }
        }
        if (ok != 1 || i >= n) break;
        Py_ssize_t units = 0, start = i, end = scan_string(p, i + 1, n, &units);
        if (end < 0) { ok = 0; break; }
        i = end;
        while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
        if (i >= n || p[i] != ':') {
            *total += units;
        } else if (memchr(p + start + 1, '\\', end - start - 2) || !depth) { /* a key is followed by its colon */
            ok = 0;
        } else {
            ok = keys_add(&keys, key_hash(p + start + 1, end - start - 2, objects[depth - 1]));
        }
    }
    keys_free(&keys);
    return ok;
}

/* A value msgspec decoded from a scan copy: where it sits in the copy, and the copy's spans. */
typedef struct {
    Py_buffer raw, text;
    Py_ssize_t at; /* raw's offset in text */
    PyObject *spans;
} InCopy;

/* Take raw, text and spans: raw must lie within text's memory (msgspec.Raw values share the buffer
 * they were decoded from) and spans be the tuple scan_line or scan_record gave with text. */
static int in_copy(PyObject *raw, PyObject *text, PyObject *spans, InCopy *value) {
    value->spans = spans;
    if (PyObject_GetBuffer(raw, &value->raw, PyBUF_SIMPLE) < 0) return 0;
    if (PyObject_GetBuffer(text, &value->text, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&value->raw);
        return 0;
    }
    const char *inner = value->raw.buf, *outer = value->text.buf;
    if (inner < outer || inner + value->raw.len > outer + value->text.len) {
        PyErr_SetString(PyExc_ValueError, "the value does not lie within the copy");
        PyBuffer_Release(&value->raw);
        PyBuffer_Release(&value->text);
        return 0;
    }
    value->at = inner - outer;
    return 1;
}

static void release_in_copy(InCopy *value) {
    PyBuffer_Release(&value->raw);
    PyBuffer_Release(&value->text);
}

/* Field `field` of span k (0: position in the copy, 1: start, 2: end, 3: JS length); -1 with an
 * exception when the span is not four integers. */
static Py_ssize_t span_field(PyObject *spans, Py_ssize_t k, int field) {
    PyObject *span = PyTuple_GET_ITEM(spans, k);
    if (!PyTuple_Check(span) || PyTuple_GET_SIZE(span) != 4) {
        PyErr_SetString(PyExc_TypeError, "a span is (position, start, end, units)");
        return -1;
    }
    return PyLong_AsSsize_t(PyTuple_GET_ITEM(span, field));
}

/* The first span whose "" lies at or after position x of the copy (spans are in the copy's order);
 * -1 with an exception when a span is not four integers. */
static Py_ssize_t first_span_from(PyObject *spans, Py_ssize_t x) {
    Py_ssize_t low = 0, high = PyTuple_GET_SIZE(spans);
    while (low < high) {
        Py_ssize_t middle = low + (high - low) / 2, position = span_field(spans, middle, 0);
        if (position == -1 && PyErr_Occurred()) return -1;
        if (position < x) low = middle + 1;
        else high = middle;
    }
    return low;
}

/* text_units of a value decoded from a scan copy, each "" that replaced a long string counted at
 * that string's JS length: (raw, text, spans) -> int, or None when a string does not end. */
static PyObject *copy_text_units(PyObject *self, PyObject *args) {
    PyObject *raw, *text, *spans;
    if (!PyArg_ParseTuple(args, "OOO!", &raw, &text, &PyTuple_Type, &spans)) return NULL;
    InCopy value;
    if (!in_copy(raw, text, spans, &value)) return NULL;
    Py_ssize_t total = 0, stop = value.at + value.raw.len;
    int ok = count_text_units(value.raw.buf, value.raw.len, &total);
    Py_ssize_t first = ok == 1 ? first_span_from(value.spans, value.at) : 0;
    for (Py_ssize_t k = first; ok == 1 && k >= 0 && k < PyTuple_GET_SIZE(value.spans); k++) {
        Py_ssize_t position = span_field(value.spans, k, 0);
        if (PyErr_Occurred() || position >= stop) break;
        if (position < value.at) continue;
        Py_ssize_t units = span_field(value.spans, k, 3); /* spans replace values, never keys */
        if (PyErr_Occurred()) break;
        total += units;
    }
    release_in_copy(&value);
    if (ok < 0) return PyErr_NoMemory();
    if (PyErr_Occurred()) return NULL;
    if (!ok) Py_RETURN_NONE;
    return PyLong_FromSsize_t(total);
}

/* Where a value decoded from a scan copy lies in the scanned buffer: (raw, text, spans, begin) ->
 * (start, end), `begin` being where the scan started. A copy byte after span k's "" comes from
 * span k's end on; one before every span from `begin` on. */
static PyObject *copy_span(PyObject *self, PyObject *args) {
    PyObject *raw, *text, *spans;
    Py_ssize_t begin;
    if (!PyArg_ParseTuple(args, "OOO!n", &raw, &text, &PyTuple_Type, &spans, &begin)) return NULL;
    InCopy value;
    if (!in_copy(raw, text, spans, &value)) return NULL;
    Py_ssize_t ends[2] = {value.at, value.at + value.raw.len}, found[2];
    for (int side = 0; side < 2 && !PyErr_Occurred(); side++) {
        Py_ssize_t x = ends[side], origin = begin, from = 0, before = first_span_from(value.spans, x) - 1;
        if (before >= 0) {
            origin = span_field(value.spans, before, 2);
            if (origin == -1 && PyErr_Occurred()) break;
            from = span_field(value.spans, before, 0) + 2;
        }
        found[side] = origin + x - from;
    }
    release_in_copy(&value);
    if (PyErr_Occurred()) return NULL;
    return Py_BuildValue("(nn)", found[0], found[1]);
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

/* -- The spill marker scan: the lines of a buffer that hold any of a few byte strings ------------------
 * (doctor.spill's markers) and its newlines, in one pass; doctor.core.rawjson.py_marked_lines is the
 * exact definition (a bytes.find per marker). Each marker is looked for at two of its bytes, the two
 * `commonness` rates rarest: a 64-byte block's positions where both are in place (Muła's "SIMD-friendly
 * algorithms for substring searching", on a chosen pair of bytes as the memchr crate's packed pair
 * does) are the only ones compared whole; the block's newlines come from the same loads. */

#define MAX_MARKERS 16

typedef struct {
    const unsigned char *text;
    Py_ssize_t length, first, second; /* the positions the filter compares */
} Marker;

typedef struct {
    Marker items[MAX_MARKERS];
    int count;
    Py_ssize_t farthest; /* the largest `second`: a block at p[i] reads p[i:i + 64 + farthest] */
    /* items[m].text[first] and [second], 32 times each, for the SIMD compares */
    _Alignas(32) unsigned char first_bytes[MAX_MARKERS][32];
    _Alignas(32) unsigned char second_bytes[MAX_MARKERS][32];
} MarkerSet;

/* How common a byte is in session text, 0 the rarest: capitals, then lowercase letters in English
 * frequency order, digits and punctuation among the common letters, space and quote most common.
 * Only the speed of the scan depends on it (how often a block's pair of bytes is in place by chance). */
static int commonness(unsigned char c) {
    static const char letters[] = "zqxjkvbpygfwmucldrhsnioate"; /* rarest first */
    if (c >= 'A' && c <= 'Z') return 0;
    if (c >= 'a' && c <= 'z') return 1 + (int)(strchr(letters, c) - letters);
    if (c == ' ' || c == '"') return 40;
    return 13; /* digits, punctuation, other bytes: about 'm' */
}

/* The two positions of the marker whose bytes are rarest (the first of equals), in order. */
static void pick_pair(Marker *marker) {
    Py_ssize_t best = 0, next = -1;
    for (Py_ssize_t k = 1; k < marker->length; k++)
        if (commonness(marker->text[k]) < commonness(marker->text[best])) best = k;
    for (Py_ssize_t k = 0; k < marker->length; k++)
        if (k != best && (next < 0 || commonness(marker->text[k]) < commonness(marker->text[next]))) next = k;
    if (next < 0) next = best; /* a one-byte marker */
    marker->first = best < next ? best : next, marker->second = best < next ? next : best;
}

/* Fill `set` from a tuple of markers (non-empty bytes without a newline: a line holds a marker
 * whole); 0 with an exception set when it is not one. */
static int marker_set(PyObject *markers, MarkerSet *set) {
    Py_ssize_t count = PyTuple_GET_SIZE(markers);
    if (count > MAX_MARKERS) {
        PyErr_Format(PyExc_ValueError, "at most %d markers", MAX_MARKERS);
        return 0;
    }
    set->count = (int)count, set->farthest = 0;
    for (Py_ssize_t m = 0; m < count; m++) {
        PyObject *item = PyTuple_GET_ITEM(markers, m);
        if (!PyBytes_Check(item) || PyBytes_GET_SIZE(item) == 0
            || memchr(PyBytes_AS_STRING(item), '\n', PyBytes_GET_SIZE(item))) {
            PyErr_SetString(PyExc_ValueError, "markers must be non-empty bytes without a newline");
            return 0;
        }
        Marker *marker = &set->items[m];
        marker->text = (const unsigned char *)PyBytes_AS_STRING(item), marker->length = PyBytes_GET_SIZE(item);
        pick_pair(marker);
        if (marker->second > set->farthest) set->farthest = marker->second;
        memset(set->first_bytes[m], marker->text[marker->first], 32);
        memset(set->second_bytes[m], marker->text[marker->second], 32);
    }
    return 1;
}

/* Whether a marker starts at p[at] (and ends by `stop`). */
static INLINE int marker_at(const unsigned char *p, Py_ssize_t at, Py_ssize_t stop, const MarkerSet *set) {
    for (int m = 0; m < set->count; m++) {
        const Marker *marker = &set->items[m];
        if (at + marker->length <= stop && p[at] == marker->text[0] && !memcmp(p + at, marker->text, marker->length))
            return 1;
    }
    return 0;
}

/* The candidates of p[0:min(64, left)] (bit k: a marker's pair of bytes is in place at p[k], within
 * p[:left]) and its newlines in *newlines, a byte at a time: a block's tail. */
static INLINE uint64_t marker_candidates_bytewise(const unsigned char *p, Py_ssize_t left, const MarkerSet *set,
                                                  uint64_t *newlines) {
    Py_ssize_t size = left < 64 ? left : 64;
    uint64_t found = 0, lines = 0;
    for (Py_ssize_t k = 0; k < size; k++) {
        lines |= (uint64_t)(p[k] == '\n') << k;
        for (int m = 0; m < set->count; m++) {
            const Marker *marker = &set->items[m];
            if (k + marker->length <= left && p[k + marker->first] == marker->text[marker->first]
                && p[k + marker->second] == marker->text[marker->second]) {
                found |= (uint64_t)1 << k;
                break;
            }
        }
    }
    *newlines = lines;
    return found;
}

/* One bit per byte of a bytes_equal result (its high bits), in byte order. */
static INLINE uint64_t byte_bits(uint64_t highs) {
    return ((highs >> 7) * 0x0102040810204080ULL) >> 56;
}

/* marker_candidates_bytewise for a whole block (p[0:64 + farthest] readable), eight bytes at a time
 * (SWAR): the scan where there is no SSE2. */
static INLINE uint64_t marker_candidates_words(const unsigned char *p, const MarkerSet *set, uint64_t *newlines) {
    uint64_t found = 0, lines = 0;
    for (int k = 0; k < 8; k++) {
        const unsigned char *q = p + 8 * k;
        uint64_t any = 0;
        for (int m = 0; m < set->count; m++) {
            const Marker *marker = &set->items[m];
            any |= bytes_equal(load8(q + marker->first), marker->text[marker->first])
                   & bytes_equal(load8(q + marker->second), marker->text[marker->second]);
        }
        found |= byte_bits(any) << (8 * k);
        lines |= byte_bits(bytes_equal(load8(q), '\n')) << (8 * k);
    }
    *newlines = lines;
    return found;
}

#if defined(__SSE2__)
/* marker_candidates_bytewise for a whole block (p[0:64 + farthest] readable), 16 bytes at a time. */
static INLINE uint64_t marker_candidates_sse2(const unsigned char *p, const MarkerSet *set, uint64_t *newlines) {
    const __m128i newline = _mm_set1_epi8('\n');
    uint64_t found = 0, lines = 0;
    for (int k = 0; k < 4; k++) {
        const unsigned char *q = p + 16 * k;
        __m128i any = _mm_setzero_si128();
        for (int m = 0; m < set->count; m++) {
            const Marker *marker = &set->items[m];
            __m128i a = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(q + marker->first)),
                                       _mm_load_si128((const __m128i *)set->first_bytes[m]));
            __m128i b = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(q + marker->second)),
                                       _mm_load_si128((const __m128i *)set->second_bytes[m]));
            any = _mm_or_si128(any, _mm_and_si128(a, b));
        }
        found |= MOVEMASK16(any) << (16 * k);
        lines |= MOVEMASK16(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)q), newline)) << (16 * k);
    }
    *newlines = lines;
    return found;
}
#endif

#if HAVE_AVX2
/* marker_candidates_sse2, 32 bytes at a time. */
AVX2_TARGET static uint64_t marker_candidates_avx2(const unsigned char *p, const MarkerSet *set, uint64_t *newlines) {
    const __m256i newline = _mm256_set1_epi8('\n');
    uint64_t found = 0, lines = 0;
    for (int k = 0; k < 2; k++) {
        const unsigned char *q = p + 32 * k;
        __m256i any = _mm256_setzero_si256();
        for (int m = 0; m < set->count; m++) {
            const Marker *marker = &set->items[m];
            __m256i a = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(q + marker->first)),
                                          _mm256_load_si256((const __m256i *)set->first_bytes[m]));
            __m256i b = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(q + marker->second)),
                                          _mm256_load_si256((const __m256i *)set->second_bytes[m]));
            any = _mm256_or_si256(any, _mm256_and_si256(a, b));
        }
        found |= MOVEMASK32(any) << (32 * k);
        lines |= MOVEMASK32(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)q), newline)) << (32 * k);
    }
    *newlines = lines;
    return found;
}
#endif

/* The marked lines' (begin, end) pairs, a growable array. */
typedef struct {
    Py_ssize_t *items, local[32];
    Py_ssize_t count, capacity; /* in Py_ssize_t, two per line */
} LineSpans;

static int line_spans_add(LineSpans *spans, Py_ssize_t begin, Py_ssize_t end) {
    if (spans->count + 2 > spans->capacity) {
        Py_ssize_t *grown = malloc(sizeof(Py_ssize_t) * spans->capacity * 2);
        if (!grown) return 0;
        memcpy(grown, spans->items, sizeof(Py_ssize_t) * spans->count);
        if (spans->items != spans->local) free(spans->items);
        spans->items = grown, spans->capacity *= 2;
    }
    spans->items[spans->count++] = begin;
    spans->items[spans->count++] = end;
    return 1;
}

/* The lines of p[start:stop] (p[start] begins one; each ends at "\n", the last maybe at stop) holding a
 * marker, as (begin, end) pairs in `spans`, and the newlines in p[start:stop] in *newlines: a block at a
 * time, a block's candidates compared in order; a line found is skipped to its end (memchr). `kind`, a
 * constant: 0 eight bytes at a time, 1 SSE2, 2 AVX2. Returns 0 when memory ran out. */
static INLINE int marked_lines_in(const unsigned char *p, Py_ssize_t start, Py_ssize_t stop, const MarkerSet *set,
                                  LineSpans *spans, Py_ssize_t *newlines, const int kind) {
    Py_ssize_t i = start, line = start, count = 0;
    Py_ssize_t whole = stop - 64 - set->farthest; /* a block at p[i] may be read whole while i <= whole */
    while (i < stop) {
        uint64_t lines, found;
        if (i > whole)
            found = marker_candidates_bytewise(p + i, stop - i, set, &lines);
#if defined(__SSE2__)
#if HAVE_AVX2
        else if (kind == 2)
            found = marker_candidates_avx2(p + i, set, &lines);
#endif
        else if (kind == 1)
            found = marker_candidates_sse2(p + i, set, &lines);
#endif
        else
            found = marker_candidates_words(p + i, set, &lines);
        for (; found; found &= found - 1) {
            int k = __builtin_ctzll(found);
            if (!marker_at(p, i + k, stop, set)) continue;
            uint64_t before = k ? lines & (~(uint64_t)0 >> (64 - k)) : 0;
            count += __builtin_popcountll(before);
            Py_ssize_t begin = before ? i + 64 - __builtin_clzll(before) : line;
            const unsigned char *newline = memchr(p + i + k, '\n', stop - i - k);
            Py_ssize_t end = newline ? newline - p : stop;
            if (!line_spans_add(spans, begin, end)) return 0;
            count += newline != NULL;
            line = end + 1;
            i = end + 1;
            goto next;
        }
        count += __builtin_popcountll(lines);
        if (lines) line = i + 64 - __builtin_clzll(lines);
        i += 64;
    next:;
    }
    *newlines = count;
    return 1;
}

#define MARKED_LINES_PARAMS                                                                              \
    (const unsigned char *p, Py_ssize_t start, Py_ssize_t stop, const MarkerSet *set, LineSpans *spans, \
     Py_ssize_t *newlines)
static int marked_lines_generic MARKED_LINES_PARAMS { return marked_lines_in(p, start, stop, set, spans, newlines, 0); }
#if defined(__GNUC__) && defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__))
__attribute__((target("popcnt"))) static int marked_lines_popcnt MARKED_LINES_PARAMS {
    return marked_lines_in(p, start, stop, set, spans, newlines, 1);
}
#endif
#if HAVE_AVX2
__attribute__((flatten)) AVX2_TARGET static int marked_lines_avx2 MARKED_LINES_PARAMS {
    return marked_lines_in(p, start, stop, set, spans, newlines, 2);
}
#endif
static int(*marked_lines_of) MARKED_LINES_PARAMS = marked_lines_generic;

/* marked_lines(buffer, start, stop, markers): ([(begin, end), ...], newlines) for buffer[start:stop]
 * (whole lines: it starts a line) and a tuple of up to MAX_MARKERS markers: the lines holding any
 * marker, in order, each once, without their "\n"; and how many "\n" the range holds. */
static PyObject *marked_lines(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, stop, newlines = 0;
    PyObject *markers;
    MarkerSet set;
    if (!PyArg_ParseTuple(args, "y*nnO!", &view, &start, &stop, &PyTuple_Type, &markers)) return NULL;
    if (!marker_set(markers, &set)) {
        PyBuffer_Release(&view);
        return NULL;
    }
    if (stop > view.len) stop = view.len;
    if (start < 0) start = 0;
    LineSpans spans = {NULL, {0}, 0, 32};
    spans.items = spans.local;
    int ok = 1;
    if (start < stop) {
        Py_BEGIN_ALLOW_THREADS
        ok = marked_lines_of(view.buf, start, stop, &set, &spans, &newlines);
        Py_END_ALLOW_THREADS
    }
    PyObject *list = ok ? PyList_New(spans.count / 2) : PyErr_NoMemory();
    for (Py_ssize_t k = 0; list && k < spans.count / 2; k++) {
        PyObject *pair = Py_BuildValue("(nn)", spans.items[2 * k], spans.items[2 * k + 1]);
        if (!pair) Py_CLEAR(list);
        else PyList_SET_ITEM(list, k, pair);
    }
    if (spans.items != spans.local) free(spans.items);
    PyBuffer_Release(&view);
    return list ? Py_BuildValue("(Nn)", list, newlines) : NULL;
}

/* Point the dispatched functions at one compiled variant: "generic", "popcnt" (x86 with popcnt; SSE2
 * for the marker scan), "avx2" (also AVX2 for the line and marker scans) or "best" for this CPU; 0
 * when this build or CPU lacks it. */
static int use_variant(const char *name) {
    int best = !strcmp(name, "best");
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    int popcnt = __builtin_cpu_supports("popcnt"), avx2 = HAVE_AVX2 && popcnt && __builtin_cpu_supports("avx2");
    if (!strcmp(name, "generic")) {
        scan_string = scan_string_generic, scan_strings = scan_strings_generic;
        marked_lines_of = marked_lines_generic;
        return 1;
    }
    if (!strcmp(name, "popcnt") || (best && !avx2)) {
        if (!popcnt) return best;
        scan_string = scan_string_popcnt, scan_strings = scan_strings_popcnt;
#if defined(__SSE2__)
        marked_lines_of = marked_lines_popcnt;
#endif
        return 1;
    }
#if HAVE_AVX2
    if (!strcmp(name, "avx2") || best) {
        if (!avx2) return 0;
        scan_string = scan_string_popcnt, scan_strings = scan_strings_avx2;
        marked_lines_of = marked_lines_avx2;
        return 1;
    }
#endif
    return 0;
#else
    return best || !strcmp(name, "generic");
#endif
}

/* use_variant for the tests, which run every variant this machine has against the pure definitions. */
static PyObject *use_variant_py(PyObject *self, PyObject *arg) {
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    return PyBool_FromLong(use_variant(name));
}

static PyMethodDef methods[] = {
    {"_use_variant", use_variant_py, METH_O,
     "Use one compiled variant ('generic', 'popcnt', 'avx2', 'best'): False when this CPU or build lacks it."},
    {"scan_line", scan_line, METH_VARARGS,
     "Check a JSON line's strings and shorten its long string values: None, (None, ()) or (copy, spans)."},
    {"scan_value", scan_value, METH_VARARGS,
     "scan_line for the JSON value opening at buffer[start]: None or (end, copy, spans, deepest, lone)."},
    {"offset_in", offset_in, METH_VARARGS, "Where inner's memory starts within outer's, or -1."},
    {"string_span", string_span, METH_VARARGS,
     "(end, JS length) of the valid JSON string token at buffer[start], within buffer[:stop]; None if none."},
    {"valid_utf8", valid_utf8, METH_O, "True when the buffer is valid UTF-8 (strict, as bytes.decode)."},
    {"utf16_length", utf16_length, METH_O, "JavaScript's .length of a str: UTF-16 code units."},
    {"string_units", string_units, METH_O,
     "JS length of the valid JSON string token in the buffer (quotes included), or None when it is not one."},
    {"scan_record", scan_record, METH_VARARGS,
     "scan_line, None also where msgspec and orjson could read a line differently: None, (None, ()) or (copy, spans)."},
    {"marked_lines", marked_lines, METH_VARARGS,
     "The lines of buffer[start:stop] holding any of a tuple of bytes, and its newlines: ([(begin, end)], count)."},
    {"scan_records", scan_records, METH_VARARGS,
     "scan_record over every line of buffer[start:stop]: (copy, spans, table), one copy line per line."},
    {"copy_text_units", copy_text_units, METH_VARARGS,
     "text_units of a value decoded from a scan copy, the replaced strings at their lengths: (raw, text, spans)."},
    {"copy_span", copy_span, METH_VARARGS,
     "(start, end) in the scanned buffer of a value decoded from a scan copy: (raw, text, spans, begin)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rawjson", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rawjson(void) {
    const char *simple = "\"\\/bfnrt";
    for (const char *c = simple; *c; c++) escape_kind[(unsigned char)*c] = 1;
    escape_kind['u'] = 'u';
    use_variant("best");
    return PyModule_Create(&module);
}
