//! nextok's C API from Rust: the declarations are written by hand from
//! include/nextok/nextok.h. Loads a tokenizer, compiles a JSON schema, runs a
//! constrained sampling loop on random logits and checks the decoded text.
//! Usage: nextok-capi-test <tokenizer dir or file>. Exit status 1 on failure.

use std::ffi::{c_char, CStr, CString};
use std::process::ExitCode;
use std::ptr;

#[repr(C)]
struct Tokenizer {
    _opaque: [u8; 0],
}
#[repr(C)]
struct Sampler {
    _opaque: [u8; 0],
}
#[repr(C)]
struct Grammar {
    _opaque: [u8; 0],
}
#[repr(C)]
struct Matcher {
    _opaque: [u8; 0],
}

type Status = i32;
const OK: Status = 0;
const INVALID_ARGUMENT: Status = 1;
const MASK_SIZE_MISMATCH: Status = 5;

#[repr(C)]
#[derive(Default)]
struct SamplerConfig {
    struct_size: usize,
    temperature: f32,
    top_p: f32,
    top_k: i32,
    min_p: f32,
    seed: u64,
    top_logprobs_k: u32,
    filter_order: i32,
    repetition_penalty: f32,
    presence_penalty: f32,
    frequency_penalty: f32,
    penalty_window: u32,
    logit_bias_tokens: usize, // const int32_t*
    logit_bias_values: usize, // const float*
    logit_bias_count: usize,
}

extern "C" {
    fn nextok_last_error() -> *const c_char;
    fn nextok_version() -> *const c_char;
    fn nextok_bitmask_words(vocab: usize) -> usize;
    fn nextok_tokenizer_load(path: *const c_char, out: *mut *mut Tokenizer) -> Status;
    fn nextok_tokenizer_free(tok: *mut Tokenizer);
    fn nextok_tokenizer_vocab_size(tok: *const Tokenizer) -> usize;
    fn nextok_tokenizer_is_eos(tok: *const Tokenizer, id: u32) -> bool;
    fn nextok_detokenize(
        tok: *const Tokenizer,
        ids: *const u32,
        n_ids: usize,
        skip_special: bool,
        out: *mut c_char,
        cap: usize,
        n: *mut usize,
    ) -> Status;
    fn nextok_sampler_config_default(cfg: *mut SamplerConfig);
    fn nextok_sampler_new(cfg: *const SamplerConfig, vocab: usize, out: *mut *mut Sampler)
        -> Status;
    fn nextok_sampler_free(s: *mut Sampler);
    fn nextok_sampler_sample(
        s: *mut Sampler,
        logits: *const f32,
        n: usize,
        mask: *const u32,
        mask_words: usize,
        token: *mut u32,
    ) -> Status;
    fn nextok_grammar_json_schema(
        tok: *const Tokenizer,
        schema: *const c_char,
        len: usize,
        opt: *const u8, // const nextok_grammar_options*; NULL = defaults
        out: *mut *mut Grammar,
    ) -> Status;
    fn nextok_grammar_free(g: *mut Grammar);
    fn nextok_matcher_new(g: *const Grammar, out: *mut *mut Matcher) -> Status;
    fn nextok_matcher_free(m: *mut Matcher);
    fn nextok_matcher_fill_mask(m: *mut Matcher, mask: *mut u32, words: usize) -> Status;
    fn nextok_matcher_accept_token(m: *mut Matcher, token: u32) -> Status;
    fn nextok_matcher_is_terminated(m: *const Matcher) -> bool;
}

const SCHEMA: &str = r#"{"type":"object","properties":{"name":{"type":"string","maxLength":8},"n":{"type":"integer","minimum":-50,"maximum":50}},"required":["name","n"],"additionalProperties":false}"#;

fn last_error() -> String {
    unsafe { CStr::from_ptr(nextok_last_error()) }.to_string_lossy().into_owned()
}

fn check(status: Status, what: &str) -> Result<(), String> {
    if status == OK {
        Ok(())
    } else {
        Err(format!("{what}: status {status}: {}", last_error()))
    }
}

/// The test's own logits generator (xorshift64*), uniform in [0, 1).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545F4914F6CDD1D) >> 40) as f32 / 16777216.0
    }
}

/// A tiny JSON reader, enough to check an instance of SCHEMA.
struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}
impl Reader<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && b" \t\r\n".contains(&self.s[self.i]) {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {}", c as char, self.i))
        }
    }
    fn string(&mut self) -> Result<String, String> {
        self.eat(b'"')?;
        let mut out = Vec::new();
        loop {
            let c = *self.s.get(self.i).ok_or("unterminated string")?;
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = *self.s.get(self.i).ok_or("bad escape")?;
                    self.i += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = self.s.get(self.i..self.i + 4).ok_or("short \\u")?;
                            let v = u32::from_str_radix(std::str::from_utf8(hex).unwrap(), 16)
                                .map_err(|e| e.to_string())?;
                            self.i += 4;
                            let ch = char::from_u32(v).unwrap_or('\u{fffd}');
                            out.extend_from_slice(ch.to_string().as_bytes());
                        }
                        _ => return Err("unknown escape".into()),
                    }
                }
                c if c < 0x20 => return Err("control character in string".into()),
                c => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|e| e.to_string())
    }
    fn integer(&mut self) -> Result<i64, String> {
        self.ws();
        let start = self.i;
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap();
        let digits = text.trim_start_matches('-');
        if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
            return Err(format!("bad integer {text:?}"));
        }
        text.parse::<i64>().map_err(|e| e.to_string())
    }
}

fn validate(text: &str) -> Result<(), String> {
    let mut r = Reader { s: text.as_bytes(), i: 0 };
    let (mut name, mut n) = (None, None);
    r.eat(b'{')?;
    loop {
        let key = r.string()?;
        r.eat(b':')?;
        match key.as_str() {
            "name" if name.is_none() => name = Some(r.string()?),
            "n" if n.is_none() => n = Some(r.integer()?),
            _ => return Err(format!("unexpected key {key:?}")),
        }
        r.ws();
        if r.s.get(r.i) == Some(&b',') {
            r.i += 1;
            continue;
        }
        r.eat(b'}')?;
        break;
    }
    r.ws();
    if r.i != r.s.len() {
        return Err("trailing bytes after the object".into());
    }
    let name = name.ok_or("missing name")?;
    let n = n.ok_or("missing n")?;
    if name.chars().count() > 8 {
        return Err(format!("name {name:?} is longer than 8 characters"));
    }
    if !(-50..=50).contains(&n) {
        return Err(format!("n = {n} is outside [-50, 50]"));
    }
    Ok(())
}

fn run(path: &str) -> Result<(), String> {
    let version = unsafe { CStr::from_ptr(nextok_version()) }.to_string_lossy().into_owned();
    println!("nextok {version}");
    let mut tok: *mut Tokenizer = ptr::null_mut();
    let cpath = CString::new(path).map_err(|e| e.to_string())?;
    check(unsafe { nextok_tokenizer_load(cpath.as_ptr(), &mut tok) }, "tokenizer_load")?;
    let vocab = unsafe { nextok_tokenizer_vocab_size(tok) };
    let words = unsafe { nextok_bitmask_words(vocab) };

    // The ABI: this struct has the C layout the library was built with.
    let mut cfg = SamplerConfig::default();
    unsafe { nextok_sampler_config_default(&mut cfg) };
    if cfg.struct_size != std::mem::size_of::<SamplerConfig>() {
        return Err(format!("sampler config: C says {} bytes, Rust {}", cfg.struct_size,
                           std::mem::size_of::<SamplerConfig>()));
    }
    cfg.temperature = 0.8;
    cfg.top_k = 50;
    cfg.seed = 7;
    let mut sampler: *mut Sampler = ptr::null_mut();
    check(unsafe { nextok_sampler_new(&cfg, vocab, &mut sampler) }, "sampler_new")?;

    let mut grammar: *mut Grammar = ptr::null_mut();
    check(unsafe {
        nextok_grammar_json_schema(tok, SCHEMA.as_ptr().cast(), SCHEMA.len(), ptr::null(),
                                   &mut grammar)
    }, "grammar_json_schema")?;
    let mut matcher: *mut Matcher = ptr::null_mut();
    check(unsafe { nextok_matcher_new(grammar, &mut matcher) }, "matcher_new")?;

    // Error paths: a NULL handle and a short mask give a code and a message.
    let mut mask = vec![0u32; words];
    let status = unsafe { nextok_matcher_fill_mask(ptr::null_mut(), mask.as_mut_ptr(), words) };
    if status != INVALID_ARGUMENT || last_error().is_empty() {
        return Err(format!("NULL matcher gave status {status}"));
    }
    let status = unsafe { nextok_matcher_fill_mask(matcher, mask.as_mut_ptr(), words - 1) };
    if status != MASK_SIZE_MISMATCH || last_error().is_empty() {
        return Err(format!("short mask gave status {status}"));
    }

    let mut rng = Rng(0x5eed);
    let mut logits = vec![0f32; vocab];
    let mut ids = Vec::new();
    for _ in 0..600 {
        check(unsafe { nextok_matcher_fill_mask(matcher, mask.as_mut_ptr(), words) }, "fill_mask")?;
        for l in logits.iter_mut() {
            *l = 8.0 * rng.next();
        }
        let mut token = 0u32;
        check(unsafe {
            nextok_sampler_sample(sampler, logits.as_ptr(), vocab, mask.as_ptr(), words, &mut token)
        }, "sampler_sample")?;
        if (mask[token as usize / 32] >> (token % 32)) & 1 == 0 {
            return Err(format!("sampled token {token} is not in the mask"));
        }
        check(unsafe { nextok_matcher_accept_token(matcher, token) }, "accept_token")?;
        if unsafe { nextok_tokenizer_is_eos(tok, token) } {
            break;
        }
        ids.push(token);
    }
    if !unsafe { nextok_matcher_is_terminated(matcher) } {
        return Err("no EOS within 600 steps".into());
    }

    let mut need = 0usize;
    check(unsafe { nextok_detokenize(tok, ids.as_ptr(), ids.len(), false, ptr::null_mut(), 0,
                                     &mut need) }, "detokenize size")?;
    let mut bytes = vec![0u8; need];
    check(unsafe { nextok_detokenize(tok, ids.as_ptr(), ids.len(), false,
                                     bytes.as_mut_ptr().cast(), need, &mut need) }, "detokenize")?;
    let text = String::from_utf8(bytes).map_err(|e| format!("output is not UTF-8: {e}"))?;
    println!("generated {} tokens: {text}", ids.len());
    validate(&text)?;

    unsafe {
        nextok_matcher_free(matcher);
        nextok_grammar_free(grammar);
        nextok_sampler_free(sampler);
        nextok_tokenizer_free(tok);
    }
    Ok(())
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: nextok-capi-test <tokenizer dir or file>");
        return ExitCode::FAILURE;
    };
    match run(&path) {
        Ok(()) => {
            println!("capi_rust: all checks passed");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("capi_rust: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}
