fn main() {
    println!("tcran demo: coming with the pipeline stages");
}
