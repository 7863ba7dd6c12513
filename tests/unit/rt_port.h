/* Renames the runtime's public symbols to port_* (force-included with -include when the
 * runtime is compiled a second time with the vector ISA switched off, e.g.
 * -march=armv8-a+nosimd or plain x86-64), so rt_port_test.c links the portable C path
 * next to the vector one and compares them. Keep in step with ecg_rt.h. */
#define ecg_rt1_act_apply port_ecg_rt1_act_apply
#define ecg_rt1_sgemm port_ecg_rt1_sgemm
#define ecg_rt1_sgemm_packed_b_floats port_ecg_rt1_sgemm_packed_b_floats
#define ecg_rt1_sgemm_pack_b port_ecg_rt1_sgemm_pack_b
#define ecg_rt1_sgemm_packed port_ecg_rt1_sgemm_packed
#define ecg_rt1_gemm_kernel_name port_ecg_rt1_gemm_kernel_name
#define ecg_rt1_conv2d_packed_floats port_ecg_rt1_conv2d_packed_floats
#define ecg_rt1_conv2d_pack port_ecg_rt1_conv2d_pack
#define ecg_rt1_conv2d_scratch_floats port_ecg_rt1_conv2d_scratch_floats
#define ecg_rt1_conv2d_macs port_ecg_rt1_conv2d_macs
#define ecg_rt1_conv2d port_ecg_rt1_conv2d
#define ecg_rt1_convtranspose2d_scratch_floats port_ecg_rt1_convtranspose2d_scratch_floats
#define ecg_rt1_convtranspose2d port_ecg_rt1_convtranspose2d
#define ecg_rt1_maxpool2d port_ecg_rt1_maxpool2d
#define ecg_rt1_avgpool2d port_ecg_rt1_avgpool2d
#define ecg_rt1_global_avgpool port_ecg_rt1_global_avgpool
#define ecg_rt1_global_maxpool port_ecg_rt1_global_maxpool
#define ecg_rt1_sgemm_packed_a port_ecg_rt1_sgemm_packed_a
#define ecg_rt1_sgemm_packed_a_scratch_floats port_ecg_rt1_sgemm_packed_a_scratch_floats
#define ecg_rt1_ibr16_applies port_ecg_rt1_ibr16_applies
#define ecg_rt1_ibr16_packed_floats port_ecg_rt1_ibr16_packed_floats
#define ecg_rt1_ibr16_pack port_ecg_rt1_ibr16_pack
#define ecg_rt1_ibr16_scratch_floats port_ecg_rt1_ibr16_scratch_floats
#define ecg_rt1_ibr16 port_ecg_rt1_ibr16
#define ecg_rt1_conv1x1_plane port_ecg_rt1_conv1x1_plane
