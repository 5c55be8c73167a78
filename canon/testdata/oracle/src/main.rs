use serde::Deserialize;
use std::collections::HashMap;
use std::io::Read;

#[derive(Debug, Deserialize, Clone, Copy)]
#[allow(non_camel_case_types)]
enum Dtype { BOOL, F4, F6_E2M3, F6_E3M2, U8, I8, F8_E5M2, F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, I16, U16, F16, BF16, I32, U32, F32, C64, F64, I64, U64 }
fn bits(d: Dtype) -> usize { use Dtype::*; match d { F4=>4, F6_E2M3|F6_E3M2=>6, BOOL|U8|I8|F8_E5M2|F8_E4M3|F8_E8M0|F8_E4M3FNUZ|F8_E5M2FNUZ=>8, I16|U16|F16|BF16=>16, I32|U32|F32=>32, C64|F64|I64|U64=>64 } }

#[derive(Debug, Deserialize)]
struct TensorInfo { dtype: Dtype, shape: Vec<usize>, data_offsets: (usize, usize) }

#[derive(Deserialize)]
struct HashMetadata {
    #[serde(rename = "__metadata__")]
    metadata: Option<HashMap<String, String>>,
    #[serde(flatten)]
    tensors: HashMap<String, TensorInfo>,
}

fn verdict(buf: &[u8]) -> String {
    if buf.len() < 8 { return "HeaderTooSmall".into(); }
    let n = u64::from_le_bytes(buf[..8].try_into().unwrap()) as usize;
    if n > 100_000_000 { return "HeaderTooLarge".into(); }
    let stop = match n.checked_add(8) { Some(s) => s, None => return "InvalidHeaderLength".into() };
    let Some(hb) = buf.get(8..stop) else { return "InvalidHeaderLength".into() };
    let s = match std::str::from_utf8(hb) { Ok(s) => s, Err(_) => return "InvalidHeader".into() };
    let md: HashMetadata = match serde_json::from_str(s) { Ok(m) => m, Err(e) => return format!("InvalidHeaderDeserialization\t{}", e) };
    let _ = md.metadata;
    let mut ts: Vec<(String, TensorInfo)> = md.tensors.into_iter().collect();
    ts.sort_by_key(|(_, t)| t.data_offsets);
    let mut start = 0usize;
    for (name, t) in &ts {
        let (s, e) = t.data_offsets;
        if s != start || e < s { return format!("InvalidOffset\t{}", name); }
        start = e;
        let Some(ne) = t.shape.iter().copied().try_fold(1usize, usize::checked_mul) else { return "ValidationOverflow".into() };
        let Some(nb) = ne.checked_mul(bits(t.dtype)) else { return "ValidationOverflow".into() };
        if nb % 8 != 0 { return "MisalignedSlice".into(); }
        if e - s != nb / 8 { return "TensorInvalidInfo".into(); }
    }
    if start.checked_add(8).and_then(|x| x.checked_add(n)) != Some(buf.len()) { return "MetadataIncompleteBuffer".into(); }
    format!("OK {}", ts.len())
}

fn main() {
    // args: files; or "-" reads a stream of length-prefixed buffers from stdin (u32 LE len + bytes), prints one line each
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() == 1 && args[0] == "-" {
        let mut all = Vec::new();
        std::io::stdin().read_to_end(&mut all).unwrap();
        let mut i = 0;
        while i + 4 <= all.len() {
            let l = u32::from_le_bytes(all[i..i+4].try_into().unwrap()) as usize;
            i += 4;
            println!("{}", verdict(&all[i..i+l]).replace('\n', " "));
            i += l;
        }
        return;
    }
    for a in args {
        let buf = std::fs::read(&a).unwrap();
        println!("{}\t{}", a, verdict(&buf).replace('\n', " "));
    }
}
