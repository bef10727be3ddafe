# The register calls of BMv2's Thrift runtime service ("standard", multiplexed), as this project uses them.
# Field ids and types follow BMv2's runtime interface so that simple_switch_grpc's Thrift server answers them;
# real BMv2 has no P4Runtime register access (PI answers UNIMPLEMENTED), so this is how registers are read there.

typedef i64 BmRegisterValue

enum RegisterOperationErrorCode {
  INVALID_INDEX = 1,
  ERROR = 2
}

exception InvalidRegisterOperation {
  1: RegisterOperationErrorCode code
}

service Standard {
  BmRegisterValue bm_register_read(1: i32 cxt_id, 2: string register_array_name, 3: i32 idx)
    throws (1: InvalidRegisterOperation ouch)

  void bm_register_write(1: i32 cxt_id, 2: string register_array_name, 3: i32 index, 4: BmRegisterValue value)
    throws (1: InvalidRegisterOperation ouch)

  void bm_register_write_range(1: i32 cxt_id, 2: string register_array_name, 3: i32 start_index,
                               4: i32 end_index, 5: BmRegisterValue value)
    throws (1: InvalidRegisterOperation ouch)

  void bm_register_reset(1: i32 cxt_id, 2: string register_array_name)
    throws (1: InvalidRegisterOperation ouch)
}
