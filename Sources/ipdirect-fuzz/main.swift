import Foundation
// libFuzzer entry point for every fuzz target (`make fuzz` builds this with
// -sanitize=fuzzer,address; IPDIRECT_FUZZ_TARGET picks the parser). Built without libFuzzer, it
// replays files instead: `ipdirect-fuzz TARGET FILE...`.
import FuzzTargets

/// The target this process fuzzes, from `IPDIRECT_FUZZ_TARGET`.
let selectedTarget: FuzzTarget? = ProcessInfo.processInfo.environment["IPDIRECT_FUZZ_TARGET"].flatMap(
    FuzzTarget.init(rawValue:))

/// Called by libFuzzer for every input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = selectedTarget else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("ipdirect-fuzz: set IPDIRECT_FUZZ_TARGET to one of \(names)\n".utf8))
        exit(2)
    }
    target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

// Without libFuzzer this top-level code is the program: replay the files given.
let arguments = CommandLine.arguments.dropFirst()
guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    FileHandle.standardError.write(Data("usage: ipdirect-fuzz TARGET FILE...  (TARGET: \(names))\n".utf8))
    exit(2)
}
for path in arguments.dropFirst() {
    guard let data = FileManager.default.contents(atPath: path) else {
        FileHandle.standardError.write(Data("ipdirect-fuzz: cannot read \(path)\n".utf8))
        exit(2)
    }
    target.run(Array(data))
}
