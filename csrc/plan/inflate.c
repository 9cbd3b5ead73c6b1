/*
 * csrc/plan/inflate.c — DEFLATE (RFC 1951) and the gzip wrapper (RFC 1952).
 *
 * Our own decoder, so the runtime needs no zlib on the device. The whole output is
 * kept in one growing buffer, which doubles as the sliding window: a back-reference
 * may reach anywhere in what was already produced (DEFLATE itself limits it to 32 KiB).
 *
 * Robustness rules, because this code reads files from anywhere:
 * - every bit comes through the bit buffer, which never reads past the input;
 * - Huffman tables are checked (over-subscribed or incomplete sets are rejected,
 *   except the one-code case RFC 1951 allows), and a code that maps to no symbol is
 *   an error rather than a table overrun;
 * - the output is bounded by `max_output`, so a "zip bomb" fails instead of eating
 *   memory;
 * - every loop consumes input or produces output, so the decoder always terminates.
 *
 * Speed: symbols are decoded through a 2^FAST_BITS-entry lookup table indexed by the
 * next input bits; only codes longer than FAST_BITS (rare) take the bit-by-bit
 * canonical walk. The bit buffer is refilled 8 bytes at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "plan/plan.h"

enum {
    MAX_CODE_BITS = 15,    /* RFC 1951: Huffman codes are at most 15 bits */
    FAST_BITS = 10,        /* codes this short decode in one table lookup */
    MAX_LITLEN_CODES = 288,
    MAX_DIST_CODES = 32,
    CODE_LENGTH_CODES = 19,
    MAX_MATCH = 258,
    END_OF_BLOCK = 256,
    GZIP_HEADER_MIN = 10,
    GZIP_TRAILER = 8,
    MAX_DEFLATE_RATIO = 1032 /* 258-byte matches in under 2 bits each */
};

/* A canonical Huffman code. `fast` maps the next FAST_BITS input bits (LSB first, as
 * DEFLATE packs codes bit-reversed) to (symbol << 4 | code length); 0 means the code
 * is longer than FAST_BITS or unassigned, and the slow walk over count/symbols decides. */
typedef struct huffman {
    uint16_t fast[1 << FAST_BITS];
    uint16_t count[MAX_CODE_BITS + 1]; /* number of codes of each length */
    uint16_t symbols[MAX_LITLEN_CODES]; /* symbols in canonical code order */
} huffman;

typedef struct inflater {
    const uint8_t *in;
    size_t in_size, in_pos;
    uint64_t bits;        /* pending input bits, LSB first; zero above bit_count */
    unsigned bit_count;
    uint8_t *out;
    size_t out_len, out_cap, max_output;
    huffman litlen, dist;
    uint32_t crc_table[8][256]; /* slicing-by-8 CRC-32 tables, built per call */
} inflater;

/* The fast loop loads input words with memcpy, which gives little-endian bit order
 * only on little-endian hosts; elsewhere the checked path does all the work. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FAST_LOOP_OK 1
#elif defined(_M_X64) || defined(_M_IX86) || defined(_M_ARM64)
#define FAST_LOOP_OK 1
#else
#define FAST_LOOP_OK 0
#endif

/* Length and distance symbols: base value and number of extra bits (RFC 1951 3.2.5). */
static const uint16_t length_base[29] = {
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
    35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t length_extra[29] = {
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
    257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
/* The order in which code-length code lengths are sent (RFC 1951 3.2.7). */
static const uint8_t code_length_order[CODE_LENGTH_CODES] = {
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

/* ---------------------------------------------------------------- bit input */

/* Top the bit buffer up to at least 56 bits, or to the end of the input. */
static void refill(inflater *s) {
    if (s->in_size - s->in_pos >= 8) {
        uint64_t word = 0;
        for (int i = 7; i >= 0; i--) /* little-endian load; compilers make it one move */
            word = (word << 8) | s->in[s->in_pos + (size_t)i];
        unsigned bytes = (63 - s->bit_count) >> 3;
        s->bits |= word << s->bit_count;
        s->in_pos += bytes;
        s->bit_count += bytes * 8;
        s->bits &= ((uint64_t)1 << s->bit_count) - 1; /* drop bytes not yet consumed */
        return;
    }
    while (s->bit_count <= 56 && s->in_pos < s->in_size) {
        s->bits |= (uint64_t)s->in[s->in_pos++] << s->bit_count;
        s->bit_count += 8;
    }
}

static void drop_bits(inflater *s, unsigned n) {
    s->bits >>= n;
    s->bit_count -= n;
}

/* Read n ≤ 16 bits into *value; an error at the end of the input. */
static ember_status read_bits(inflater *s, unsigned n, unsigned *value) {
    *value = 0;
    if (s->bit_count < n) {
        refill(s);
        if (s->bit_count < n)
            return ember_error_set(EMBER_ERROR_FORMAT, "deflate: compressed data is truncated");
    }
    *value = (unsigned)(s->bits & (((uint64_t)1 << n) - 1));
    drop_bits(s, n);
    return EMBER_OK;
}

/* Discard the bits of a partial byte and hand whole unread bytes back to the input,
 * so byte-oriented reads (stored blocks, the gzip trailer) start at in_pos. */
static void align_to_byte(inflater *s) {
    drop_bits(s, s->bit_count & 7);
    s->in_pos -= s->bit_count / 8;
    s->bits = 0;
    s->bit_count = 0;
}

/* ---------------------------------------------------------------- output */

static ember_status reserve_output(inflater *s, size_t extra) {
    if (s->out_cap - s->out_len >= extra)
        return EMBER_OK;
    if (extra > s->max_output - s->out_len)
        return ember_error_set(EMBER_ERROR_FORMAT,
                               "deflate: output exceeds the limit of %zu bytes", s->max_output);
    size_t needed = s->out_len + extra;
    size_t capacity = s->out_cap > s->max_output / 2 ? s->max_output : s->out_cap * 2;
    if (capacity < needed)
        capacity = needed;
    if (capacity < 65536 && s->max_output >= 65536)
        capacity = 65536;
    uint8_t *grown = realloc(s->out, capacity);
    if (!grown)
        return ember_error_set(EMBER_ERROR_MEMORY, "deflate: out of memory for %zu bytes",
                               capacity);
    s->out = grown;
    s->out_cap = capacity;
    return EMBER_OK;
}

/* ---------------------------------------------------------------- Huffman codes */

static unsigned reverse_bits(unsigned code, unsigned length) {
    unsigned reversed = 0;
    for (unsigned i = 0; i < length; i++, code >>= 1)
        reversed = (reversed << 1) | (code & 1);
    return reversed;
}

/* Build the code for `n` symbols from their lengths (0 = unused). Returns the unused
 * code space: 0 for a complete code, > 0 incomplete, < 0 over-subscribed. */
static int huffman_build(huffman *h, const uint8_t *lengths, unsigned n) {
    memset(h->count, 0, sizeof h->count);
    for (unsigned sym = 0; sym < n; sym++)
        h->count[lengths[sym]]++;
    h->count[0] = 0;
    int left = 1;
    for (unsigned len = 1; len <= MAX_CODE_BITS; len++) {
        left = left * 2 - h->count[len];
        if (left < 0)
            return left;
    }
    uint16_t offset[MAX_CODE_BITS + 2];
    offset[1] = 0;
    for (unsigned len = 1; len <= MAX_CODE_BITS; len++)
        offset[len + 1] = (uint16_t)(offset[len] + h->count[len]);
    for (unsigned sym = 0; sym < n; sym++)
        if (lengths[sym])
            h->symbols[offset[lengths[sym]]++] = (uint16_t)sym;

    /* Canonical codes in order: each length's codes follow the previous length's,
     * shifted left by one. Short codes fill every table slot that starts with them. */
    memset(h->fast, 0, sizeof h->fast);
    unsigned code = 0, index = 0;
    for (unsigned len = 1; len <= FAST_BITS; len++, code <<= 1) {
        for (unsigned k = 0; k < h->count[len]; k++, code++, index++) {
            uint16_t entry = (uint16_t)(h->symbols[index] << 4 | len);
            for (unsigned slot = reverse_bits(code, len); slot < (1u << FAST_BITS); slot += 1u << len)
                h->fast[slot] = entry;
        }
    }
    return left;
}

/* RFC 1951 allows an incomplete code only when it has a single code (of one bit), or
 * none at all (a block of literals needs no distance code). */
static int incomplete_code_allowed(const huffman *h) {
    unsigned used = 0;
    for (unsigned len = 1; len <= MAX_CODE_BITS; len++)
        used += h->count[len];
    return used == 0 || (used == 1 && h->count[1] == 1);
}

/* The slow path: walk the canonical code one bit at a time (codes of a length are
 * consecutive integers starting at `first`). Returns the symbol or -1. */
static int huffman_walk(const huffman *h, uint64_t bits, unsigned *length) {
    int code = 0, first = 0, index = 0;
    for (unsigned len = 1; len <= MAX_CODE_BITS; len++) {
        code |= (int)(bits & 1);
        bits >>= 1;
        int count = h->count[len];
        if (code - first < count) {
            *length = len;
            return h->symbols[index + code - first];
        }
        index += count;
        first = (first + count) << 1;
        code <<= 1;
    }
    return -1;
}

static ember_status decode_symbol(inflater *s, const huffman *h, unsigned *symbol) {
    if (s->bit_count < MAX_CODE_BITS)
        refill(s);
    unsigned entry = h->fast[s->bits & ((1u << FAST_BITS) - 1)];
    unsigned length = entry & 15;
    if (length) {
        *symbol = entry >> 4;
    } else {
        int found = huffman_walk(h, s->bits, &length);
        if (found < 0)
            return ember_error_set(EMBER_ERROR_FORMAT, "deflate: invalid Huffman code");
        *symbol = (unsigned)found;
    }
    /* Bits past the end of the input read as zeros; a code using them is truncation. */
    if (length > s->bit_count)
        return ember_error_set(EMBER_ERROR_FORMAT, "deflate: compressed data is truncated");
    drop_bits(s, length);
    return EMBER_OK;
}

/* ---------------------------------------------------------------- blocks */

static ember_status inflate_stored(inflater *s) {
    align_to_byte(s);
    if (s->in_size - s->in_pos < 4)
        return ember_error_set(EMBER_ERROR_FORMAT, "deflate: stored block header is truncated");
    const uint8_t *p = s->in + s->in_pos;
    unsigned len = p[0] | (unsigned)p[1] << 8, nlen = p[2] | (unsigned)p[3] << 8;
    if (len != (~nlen & 0xffffu))
        return ember_error_set(EMBER_ERROR_FORMAT,
                               "deflate: stored block length %u does not match its complement", len);
    s->in_pos += 4;
    if (s->in_size - s->in_pos < len)
        return ember_error_set(EMBER_ERROR_FORMAT, "deflate: stored block of %u bytes is truncated",
                               len);
    ember_status status = reserve_output(s, len);
    if (status != EMBER_OK)
        return status;
    if (len) /* out may still be NULL when nothing was produced */
        memcpy(s->out + s->out_len, s->in + s->in_pos, len);
    s->out_len += len;
    s->in_pos += len;
    return EMBER_OK;
}

static ember_status copy_match(inflater *s, unsigned length, unsigned distance) {
    if (distance > s->out_len)
        return ember_error_set(EMBER_ERROR_FORMAT,
                               "deflate: distance %u reaches before the start of the output (%zu bytes)",
                               distance, s->out_len);
    ember_status status = reserve_output(s, length);
    if (status != EMBER_OK)
        return status;
    uint8_t *dst = s->out + s->out_len;
    const uint8_t *src = dst - distance;
    if (distance >= length) {
        memcpy(dst, src, length);
    } else { /* overlapping: the match repeats bytes it is producing */
        for (unsigned i = 0; i < length; i++)
            dst[i] = src[i];
    }
    s->out_len += length;
    return EMBER_OK;
}

/* A length/distance pair, its length symbol (257..285) already decoded. */
static ember_status inflate_match(inflater *s, unsigned symbol) {
    unsigned index = symbol - 257, extra, dist_symbol, dist_extra_bits;
    if (index >= 29)
        return ember_error_set(EMBER_ERROR_FORMAT, "deflate: invalid length symbol %u", symbol);
    ember_status status = read_bits(s, length_extra[index], &extra);
    if (status != EMBER_OK)
        return status;
    unsigned length = length_base[index] + extra;
    status = decode_symbol(s, &s->dist, &dist_symbol);
    if (status != EMBER_OK)
        return status;
    if (dist_symbol >= 30)
        return ember_error_set(EMBER_ERROR_FORMAT, "deflate: invalid distance symbol %u",
                               dist_symbol);
    status = read_bits(s, dist_extra[dist_symbol], &dist_extra_bits);
    if (status != EMBER_OK)
        return status;
    return copy_match(s, length, dist_base[dist_symbol] + dist_extra_bits);
}

/* One symbol of a compressed block the careful way: every read checked against the
 * end of the input, every write against the output capacity. */
static ember_status inflate_symbol_checked(inflater *s, int *end_of_block) {
    unsigned symbol;
    ember_status status = decode_symbol(s, &s->litlen, &symbol);
    if (status != EMBER_OK)
        return status;
    if (symbol == END_OF_BLOCK) {
        *end_of_block = 1;
        return EMBER_OK;
    }
    if (symbol > END_OF_BLOCK)
        return inflate_match(s, symbol);
    if ((status = reserve_output(s, 1)) != EMBER_OK)
        return status;
    s->out[s->out_len++] = (uint8_t)symbol;
    return EMBER_OK;
}

/* A symbol from the bit buffer held in a local, which has at least 48 valid bits
 * (enough for a length code, its extra bits, a distance code and its extra bits). */
static int decode_fast(const huffman *h, uint64_t *bits, unsigned *count) {
    unsigned entry = h->fast[*bits & ((1u << FAST_BITS) - 1)], length = entry & 15;
    int symbol = (int)(entry >> 4);
    if (!length && (symbol = huffman_walk(h, *bits, &length)) < 0)
        return -1;
    *bits >>= length;
    *count -= length;
    return symbol;
}

/* The hot loop. It runs while 8 input bytes and MAX_MATCH bytes of output room
 * remain, so no check inside can fail for lack of either; the bit buffer lives in
 * locals and is refilled without branches (the bits above `count` hold the next
 * input bytes, so loading them again at the same place changes nothing). Returns
 * with the state written back, for the checked path to continue. */
static ember_status inflate_codes_fast(inflater *s, int *end_of_block) {
    uint64_t bits = s->bits;
    unsigned count = s->bit_count;
    size_t in_pos = s->in_pos, out_len = s->out_len;
    uint8_t *out = s->out;
    ember_status status = EMBER_OK;
    while (s->in_size - in_pos >= 8 && s->out_cap - out_len >= MAX_MATCH) {
        uint64_t word;
        memcpy(&word, s->in + in_pos, sizeof word); /* little-endian hosts only (see below) */
        bits |= word << count;
        in_pos += (63 - count) >> 3;
        count |= 56;
        int symbol = decode_fast(&s->litlen, &bits, &count);
        if (symbol < 256) {
            if (symbol < 0) {
                status = ember_error_set(EMBER_ERROR_FORMAT, "deflate: invalid Huffman code");
                break;
            }
            out[out_len++] = (uint8_t)symbol;
            continue;
        }
        if (symbol == END_OF_BLOCK) {
            *end_of_block = 1;
            break;
        }
        unsigned index = (unsigned)symbol - 257;
        if (index >= 29) {
            status = ember_error_set(EMBER_ERROR_FORMAT, "deflate: invalid length symbol %d", symbol);
            break;
        }
        unsigned length = length_base[index] + (unsigned)(bits & ((1u << length_extra[index]) - 1));
        bits >>= length_extra[index];
        count -= length_extra[index];
        int dist_symbol = decode_fast(&s->dist, &bits, &count);
        if (dist_symbol < 0 || dist_symbol >= 30) {
            status = ember_error_set(EMBER_ERROR_FORMAT, "deflate: invalid distance code");
            break;
        }
        unsigned distance = dist_base[dist_symbol] + (unsigned)(bits & ((1u << dist_extra[dist_symbol]) - 1));
        bits >>= dist_extra[dist_symbol];
        count -= dist_extra[dist_symbol];
        if (distance > out_len) {
            status = ember_error_set(EMBER_ERROR_FORMAT,
                                     "deflate: distance %u reaches before the start of the output (%zu bytes)",
                                     distance, out_len);
            break;
        }
        const uint8_t *src = out + out_len - distance;
        uint8_t *dst = out + out_len;
        if (distance >= length)
            memcpy(dst, src, length);
        else
            for (unsigned i = 0; i < length; i++)
                dst[i] = src[i];
        out_len += length;
    }
    s->bits = bits & (((uint64_t)1 << count) - 1); /* the checked path wants zeros above */
    s->bit_count = count;
    s->in_pos = in_pos;
    s->out_len = out_len;
    return status;
}

/* The body of a compressed block, with s->litlen and s->dist ready. */
static ember_status inflate_codes(inflater *s) {
    int end_of_block = 0;
    while (!end_of_block) {
        ember_status status = EMBER_OK;
        /* Grow ahead so the fast loop can run, unless that would pass max_output. */
        if (s->out_cap - s->out_len < MAX_MATCH && s->max_output - s->out_len >= MAX_MATCH)
            status = reserve_output(s, MAX_MATCH);
        if (status == EMBER_OK && FAST_LOOP_OK && s->in_size - s->in_pos >= 8 &&
            s->out_cap - s->out_len >= MAX_MATCH)
            status = inflate_codes_fast(s, &end_of_block);
        if (status == EMBER_OK && !end_of_block)
            status = inflate_symbol_checked(s, &end_of_block);
        if (status != EMBER_OK)
            return status;
    }
    return EMBER_OK;
}

static ember_status inflate_fixed(inflater *s) {
    uint8_t lengths[MAX_LITLEN_CODES];
    unsigned sym = 0;
    for (; sym < 144; sym++) lengths[sym] = 8;
    for (; sym < 256; sym++) lengths[sym] = 9;
    for (; sym < 280; sym++) lengths[sym] = 7;
    for (; sym < 288; sym++) lengths[sym] = 8;
    huffman_build(&s->litlen, lengths, MAX_LITLEN_CODES);
    for (sym = 0; sym < MAX_DIST_CODES; sym++) lengths[sym] = 5;
    huffman_build(&s->dist, lengths, MAX_DIST_CODES);
    return inflate_codes(s);
}

/* Read the literal/length and distance code lengths, themselves Huffman-coded with
 * run-length symbols 16 (repeat previous), 17 and 18 (runs of zeros). */
static ember_status read_code_lengths(inflater *s, const huffman *lengths_code, unsigned total,
                                      uint8_t *lengths) {
    unsigned filled = 0;
    while (filled < total) {
        unsigned symbol, repeat, value = 0;
        ember_status status = decode_symbol(s, lengths_code, &symbol);
        if (status != EMBER_OK)
            return status;
        if (symbol < 16) {
            lengths[filled++] = (uint8_t)symbol;
            continue;
        }
        if (symbol == 16) {
            if (filled == 0)
                return ember_error_set(EMBER_ERROR_FORMAT, "deflate: repeat of a code length with no previous length");
            value = lengths[filled - 1];
            status = read_bits(s, 2, &repeat);
            repeat += 3;
        } else if (symbol == 17) {
            status = read_bits(s, 3, &repeat);
            repeat += 3;
        } else {
            status = read_bits(s, 7, &repeat);
            repeat += 11;
        }
        if (status != EMBER_OK)
            return status;
        if (repeat > total - filled)
            return ember_error_set(EMBER_ERROR_FORMAT, "deflate: code length repeat runs past the end");
        memset(lengths + filled, (int)value, repeat);
        filled += repeat;
    }
    return EMBER_OK;
}

static ember_status inflate_dynamic(inflater *s) {
    unsigned hlit, hdist, hclen;
    ember_status status;
    if ((status = read_bits(s, 5, &hlit)) != EMBER_OK || (status = read_bits(s, 5, &hdist)) != EMBER_OK ||
        (status = read_bits(s, 4, &hclen)) != EMBER_OK)
        return status;
    hlit += 257, hdist += 1, hclen += 4;
    if (hlit > 286 || hdist > 30)
        return ember_error_set(EMBER_ERROR_FORMAT, "deflate: too many length (%u) or distance (%u) codes",
                               hlit, hdist);
    uint8_t lengths[MAX_LITLEN_CODES + MAX_DIST_CODES] = {0};
    for (unsigned i = 0; i < hclen; i++) {
        unsigned length;
        if ((status = read_bits(s, 3, &length)) != EMBER_OK)
            return status;
        lengths[code_length_order[i]] = (uint8_t)length;
    }
    /* The code-length code is decoded with the distance table's storage. */
    if (huffman_build(&s->dist, lengths, CODE_LENGTH_CODES) != 0)
        return ember_error_set(EMBER_ERROR_FORMAT, "deflate: incomplete or over-subscribed code-length code");
    if ((status = read_code_lengths(s, &s->dist, hlit + hdist, lengths)) != EMBER_OK)
        return status;
    if (lengths[END_OF_BLOCK] == 0)
        return ember_error_set(EMBER_ERROR_FORMAT, "deflate: block has no end-of-block code");
    int left = huffman_build(&s->litlen, lengths, hlit);
    if (left < 0 || (left > 0 && !incomplete_code_allowed(&s->litlen)))
        return ember_error_set(EMBER_ERROR_FORMAT, "deflate: invalid literal/length code");
    left = huffman_build(&s->dist, lengths + hlit, hdist);
    if (left < 0 || (left > 0 && !incomplete_code_allowed(&s->dist)))
        return ember_error_set(EMBER_ERROR_FORMAT, "deflate: invalid distance code");
    return inflate_codes(s);
}

/* Inflate one raw DEFLATE stream starting at s->in_pos; on return in_pos is the first
 * byte after it. */
static ember_status inflate_stream(inflater *s) {
    unsigned final = 0;
    while (!final) {
        unsigned type;
        ember_status status;
        if ((status = read_bits(s, 1, &final)) != EMBER_OK || (status = read_bits(s, 2, &type)) != EMBER_OK)
            return status;
        if (type == 0)
            status = inflate_stored(s);
        else if (type == 1)
            status = inflate_fixed(s);
        else if (type == 2)
            status = inflate_dynamic(s);
        else
            status = ember_error_set(EMBER_ERROR_FORMAT, "deflate: invalid block type 3");
        if (status != EMBER_OK)
            return status;
    }
    align_to_byte(s);
    return EMBER_OK;
}

/* ---------------------------------------------------------------- CRC-32 */

static void crc32_init(uint32_t table[8][256]) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++)
        for (int t = 1; t < 8; t++)
            table[t][n] = (table[t - 1][n] >> 8) ^ table[0][table[t - 1][n] & 0xff];
}

/* Slicing-by-8: eight bytes per step through eight tables, endian-neutral loads. */
static uint32_t crc32_update(const uint32_t table[8][256], uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (; n >= 8; n -= 8, p += 8) {
        uint32_t lo = crc ^ (p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
              table[4][lo >> 24] ^ table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^ table[0][p[7]];
    }
    while (n--)
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* ---------------------------------------------------------------- gzip */

enum { FTEXT = 1, FHCRC = 2, FEXTRA = 4, FNAME = 8, FCOMMENT = 16, FRESERVED = 0xe0 };

static uint32_t load_le32(const uint8_t *p) {
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Skip a NUL-terminated header field (file name, comment). */
static ember_status skip_zero_terminated(const uint8_t *in, size_t size, size_t *pos, const char *what) {
    const uint8_t *end = memchr(in + *pos, 0, size - *pos);
    if (!end)
        return ember_error_set(EMBER_ERROR_FORMAT, "gzip: %s in the header is not terminated", what);
    *pos = (size_t)(end - in) + 1;
    return EMBER_OK;
}

/* Parse the member header at *pos (RFC 1952 2.3) and leave *pos on the DEFLATE data. */
static ember_status gzip_header(const inflater *s, size_t *pos) {
    const uint8_t *in = s->in, *h = in + *pos;
    size_t size = s->in_size, start = *pos;
    if (size - start < GZIP_HEADER_MIN)
        return ember_error_set(EMBER_ERROR_FORMAT, "gzip: header is truncated");
    if (h[0] != 0x1f || h[1] != 0x8b)
        return ember_error_set(EMBER_ERROR_FORMAT, "gzip: bad magic bytes %02x %02x", h[0], h[1]);
    if (h[2] != 8)
        return ember_error_set(EMBER_ERROR_FORMAT, "gzip: unknown compression method %u", h[2]);
    unsigned flags = h[3];
    if (flags & FRESERVED)
        return ember_error_set(EMBER_ERROR_FORMAT, "gzip: reserved header flags %#x are set", flags);
    *pos = start + GZIP_HEADER_MIN;
    if (flags & FEXTRA) {
        if (size - *pos < 2)
            return ember_error_set(EMBER_ERROR_FORMAT, "gzip: extra field is truncated");
        size_t extra = in[*pos] | (size_t)in[*pos + 1] << 8;
        if (size - *pos - 2 < extra)
            return ember_error_set(EMBER_ERROR_FORMAT, "gzip: extra field is truncated");
        *pos += 2 + extra;
    }
    ember_status status;
    if ((flags & FNAME) && (status = skip_zero_terminated(in, size, pos, "file name")) != EMBER_OK)
        return status;
    if ((flags & FCOMMENT) && (status = skip_zero_terminated(in, size, pos, "comment")) != EMBER_OK)
        return status;
    if (flags & FHCRC) {
        if (size - *pos < 2)
            return ember_error_set(EMBER_ERROR_FORMAT, "gzip: header CRC is truncated");
        uint32_t crc = crc32_update(s->crc_table, 0, in + start, *pos - start) & 0xffffu;
        if (crc != (in[*pos] | (uint32_t)in[*pos + 1] << 8))
            return ember_error_set(EMBER_ERROR_FORMAT, "gzip: header CRC mismatch");
        *pos += 2;
    }
    return EMBER_OK;
}

/* One member: header, DEFLATE data, CRC-32 and ISIZE of what it produced. */
static ember_status gzip_member(inflater *s) {
    size_t pos = s->in_pos, member_start = s->out_len;
    ember_status status = gzip_header(s, &pos);
    if (status != EMBER_OK)
        return status;
    s->in_pos = pos;
    if ((status = inflate_stream(s)) != EMBER_OK)
        return status;
    if (s->in_size - s->in_pos < GZIP_TRAILER)
        return ember_error_set(EMBER_ERROR_FORMAT, "gzip: trailer (CRC-32 and size) is truncated");
    const uint8_t *trailer = s->in + s->in_pos;
    size_t produced = s->out_len - member_start;
    uint32_t crc = produced ? crc32_update(s->crc_table, 0, s->out + member_start, produced) : 0;
    if (crc != load_le32(trailer))
        return ember_error_set(EMBER_ERROR_FORMAT, "gzip: CRC-32 mismatch (data %08x, trailer %08x)",
                               (unsigned)crc, (unsigned)load_le32(trailer));
    if ((uint32_t)produced != load_le32(trailer + 4))
        return ember_error_set(EMBER_ERROR_FORMAT, "gzip: size mismatch (data %zu bytes, trailer %u)",
                               produced, (unsigned)load_le32(trailer + 4));
    s->in_pos += GZIP_TRAILER;
    return EMBER_OK;
}

/* After a member: another member, zero padding (some writers pad to a block), or
 * the end. Returns 1 when another member follows. */
static int another_member(const inflater *s, ember_status *status) {
    *status = EMBER_OK;
    size_t rest = s->in_size - s->in_pos;
    const uint8_t *p = s->in + s->in_pos;
    if (rest >= 2 && p[0] == 0x1f && p[1] == 0x8b)
        return 1;
    for (size_t i = 0; i < rest; i++)
        if (p[i] != 0) {
            *status = ember_error_set(EMBER_ERROR_FORMAT, "gzip: %zu bytes of garbage after the data", rest);
            break;
        }
    return 0;
}

ember_status ember_gunzip(const uint8_t *in, size_t in_size, size_t max_output, uint8_t **out,
                          size_t *out_size) {
    if ((!in && in_size) || !out || !out_size)
        return ember_error_set(EMBER_ERROR_ARGUMENT, "ember_gunzip: NULL argument");
    inflater *s = calloc(1, sizeof *s);
    if (!s)
        return ember_error_set(EMBER_ERROR_MEMORY, "gzip: out of memory");
    s->in = in;
    s->in_size = in_size;
    s->max_output = max_output;
    crc32_init(s->crc_table);
    /* The last ISIZE is the (mod 2^32) size of a single-member file: a good first guess
     * that saves reallocations on large models, never trusted beyond max_output. */
    ember_status status = EMBER_OK;
    if (in_size >= GZIP_HEADER_MIN + GZIP_TRAILER) {
        size_t guess = load_le32(in + in_size - 4);
        if (guess / MAX_DEFLATE_RATIO > in_size) /* more than DEFLATE can expand to: a lie */
            guess = 0;
        status = reserve_output(s, guess < max_output ? guess : max_output);
    }
    if (status == EMBER_OK && in_size < GZIP_HEADER_MIN + GZIP_TRAILER)
        status = ember_error_set(EMBER_ERROR_FORMAT, "gzip: %zu bytes is too short for gzip data", in_size);
    while (status == EMBER_OK) {
        status = gzip_member(s);
        if (status != EMBER_OK || !another_member(s, &status))
            break;
    }
    if (status != EMBER_OK) {
        free(s->out);
        free(s);
        return status;
    }
    *out = s->out ? s->out : malloc(1); /* a valid pointer even for empty output */
    *out_size = s->out_len;
    free(s);
    if (!*out)
        return ember_error_set(EMBER_ERROR_MEMORY, "gzip: out of memory");
    return EMBER_OK;
}
