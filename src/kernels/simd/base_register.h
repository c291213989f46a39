// A pointer the compiler must keep in one register, so that loads at compile-time offsets
// from it address memory as [register + displacement].
#pragma once

namespace tern::kernels {

/// p itself, passed through an empty asm statement the compiler cannot see through: it
/// can no longer fold p into the address arithmetic of the loads that follow (as
/// [base + index * scale + displacement], with p's offset from a tensor's start in the
/// index register) and keeps p in a register of its own. p may point outside its array
/// (a border tap's column left of the row, whose pixels are not read): only the loads
/// through it must be in bounds, as with the integer offsets it replaces (tern assumes a
/// flat address space; UBSan's pointer-overflow check flags only wrap-around).
///
/// Why: Intel cores split ("un-laminate") a vector instruction with a memory operand
/// whose address has an index register into two micro-ops at rename, so an FMA reading
/// its input from memory costs two rename slots instead of one. The first layer's
/// register tile (3 input channels x 9 taps x 12 pixels of FMAs from broadcast inputs)
/// ran 1.2x faster with base-only addresses on an AVX-512 Xeon (Emerald Rapids).
template <class T>
inline T* base_register(T* p) {
  asm("" : "+r"(p));
  return p;
}

}  // namespace tern::kernels
