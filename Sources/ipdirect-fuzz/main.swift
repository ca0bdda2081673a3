// libFuzzer entry for every fuzz target (`make fuzz`: -sanitize=fuzzer,address; IPDIRECT_FUZZ_TARGET
// picks the parser). Declarations only: libFuzzer supplies main; the ordinary build does nothing.
import Foundation
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
