/* Optional accelerator for doctor.core.rawjson: UTF-8 validation and the JavaScript length
 * (UTF-16 code units) of a JSON string token, counted from its raw bytes without decoding it.
 * doctor.core.rawjson holds the exact pure-Python definitions these agree with on what they
 * are given: the counters trust their input (a token msgspec accepted, in bytes valid_utf8
 * accepted) and do not validate it again. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence starting at p[0] (a byte >= 0x80), or 0 if invalid.
 * Strict as CPython's decoder: no overlongs, no encoded surrogates, nothing above U+10FFFF. */
static Py_ssize_t utf8_sequence(const unsigned char *p, Py_ssize_t left) {
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
static uint64_t bytes_equal(uint64_t w, unsigned char x) {
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
static Py_ssize_t scan_string(const unsigned char *p, Py_ssize_t i, Py_ssize_t stop, Py_ssize_t *units_out) {
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
    {"offset_in", offset_in, METH_VARARGS, "Where inner's memory starts within outer's, or -1."},
    {"string_span", string_span, METH_VARARGS,
     "(end, JS length) of the valid JSON string token at buffer[start], within buffer[:stop]; None if none."},
    {"valid_utf8", valid_utf8, METH_O, "True when the buffer is valid UTF-8 (strict, as bytes.decode)."},
    {"fast_decodable", fast_decodable, METH_O,
     "valid_utf8, and no run of 309 or more ASCII digits (a number only msgspec accepts)."},
    {"text_units", text_units, METH_O,
     "Sum of the JS lengths of the string values (not keys) in the valid JSON value in the buffer."},
    {"string_units", string_units, METH_O,
     "JS length of the valid JSON string token in the buffer (quotes included), or None when it is not one."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rawjson", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rawjson(void) { return PyModule_Create(&module); }
