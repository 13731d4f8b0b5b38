// Links libnextok_c.so from the folder ctest names in NEXTOK_C_LIB_DIR.
fn main() {
    println!("cargo:rerun-if-env-changed=NEXTOK_C_LIB_DIR");
    let dir = std::env::var("NEXTOK_C_LIB_DIR")
        .expect("NEXTOK_C_LIB_DIR must name the folder that holds libnextok_c.so");
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rustc-link-lib=dylib=nextok_c");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
}
